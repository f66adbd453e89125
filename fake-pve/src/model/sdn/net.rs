//! Addresses and networks as the SDN code needs them (`Net::IP`,
//! `NetAddr::IP`, `Net::Subnet` in pve-network): a CIDR, whether an
//! address is inside it, and walking addresses in order.

use std::net::IpAddr;

/// A network `address/prefix` (IPv4 or IPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The address as written (not necessarily the network address).
    pub addr: IpAddr,
    /// The prefix length.
    pub prefix: u8,
}

impl Cidr {
    /// Parses `10.0.0.0/24` or `fd00::/64`.
    pub fn parse(s: &str) -> Option<Self> {
        let (a, p) = s.split_once('/')?;
        let addr: IpAddr = a.parse().ok()?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 3 {
            return None;
        }
        let prefix: u8 = p.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(Self { addr, prefix })
    }

    /// Whether this is an IPv4 network.
    pub fn is_v4(&self) -> bool {
        self.addr.is_ipv4()
    }

    fn bits(&self) -> u32 {
        if self.is_v4() { 32 } else { 128 }
    }

    fn mask(&self) -> u128 {
        let host = self.bits() - u32::from(self.prefix);
        let all = if self.is_v4() {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
        if host >= 128 {
            0
        } else {
            all & !((1u128 << host) - 1)
        }
    }

    /// The first address of the network.
    pub fn network(&self) -> u128 {
        num(self.addr) & self.mask()
    }

    /// Whether `ip` lies in the network (same family).
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.is_v4() && (num(ip) & self.mask()) == self.network()
    }

    /// The address `n` in this network's family.
    pub fn addr_of(&self, n: u128) -> IpAddr {
        of(n, self.is_v4())
    }
}

/// An address as a number.
pub fn num(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// A number as an address of the family.
pub fn of(n: u128, v4: bool) -> IpAddr {
    if v4 {
        IpAddr::V4(u32::try_from(n).unwrap_or(u32::MAX).into())
    } else {
        IpAddr::V6(n.into())
    }
}

/// The canonical text of an address (`NetAddr::IP->canon`), or `None`
/// when it is not one.
pub fn canon(s: &str) -> Option<String> {
    s.parse::<IpAddr>().ok().map(|a| a.to_string())
}
