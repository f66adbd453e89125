//! Reading an OVA archive as it streams by: the tar's member names and
//! sizes, and the text of its first `*.ovf` member (what
//! `tar -xO --wildcards --occurrence=1 -f X.ova '*.ovf'` prints). Only
//! that member's bytes are kept.

use super::OvaContent;

/// The largest manifest kept.
const MAX_OVF: usize = 4 << 20;

/// Where the scan is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Reading a 512-byte header.
    Header,
    /// Inside a member's data (and its padding).
    Data,
    /// The end-of-archive block was read.
    End,
    /// Not a tar archive (a header's checksum is wrong).
    Invalid,
}

/// What a member's data is read for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Keep {
    /// Skipped.
    Nothing,
    /// The manifest.
    Ovf,
    /// A GNU long name (`L`) for the next member.
    LongName,
    /// A pax extended header (`x`) for the next member.
    Pax,
}

/// A streaming reader of a tar archive.
#[derive(Debug, Clone)]
pub struct TarScan {
    state: State,
    header: Vec<u8>,
    left: u64,
    size: u64,
    keep: Keep,
    kept: Vec<u8>,
    next_name: Option<String>,
    members: Vec<(String, u64)>,
    ovf: Option<Vec<u8>>,
    headers: u64,
}

impl Default for TarScan {
    fn default() -> Self {
        Self::new()
    }
}

fn octal(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        // base-256 (GNU) for large sizes
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for b in &field[1..] {
            v = v.checked_mul(256)?.checked_add(u64::from(*b))?;
        }
        return Some(v);
    }
    let s: String = field
        .iter()
        .take_while(|b| **b != 0)
        .map(|b| char::from(*b))
        .collect();
    let s = s.trim();
    if s.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(s, 8).ok()
}

fn cstr(field: &[u8]) -> String {
    let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// GNU tar's wildcard match of `*.ovf` (a `*` matches `/` too).
fn is_ovf(name: &str) -> bool {
    name.ends_with(".ovf")
}

/// The `path` record of a pax header.
fn pax_path(data: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(data);
    let mut rest: &str = &text;
    let mut path = None;
    while !rest.is_empty() {
        let (len, _) = rest.split_once(' ')?;
        let n: usize = len.parse().ok()?;
        let rec = rest.get(..n)?;
        rest = &rest[n..];
        let (_, kv) = rec.split_once(' ')?;
        let kv = kv.strip_suffix('\n').unwrap_or(kv);
        if let Some(p) = kv.strip_prefix("path=") {
            path = Some(p.to_string());
        }
    }
    path
}

impl TarScan {
    /// A scan at the archive's start.
    pub fn new() -> Self {
        Self {
            state: State::Header,
            header: Vec::with_capacity(512),
            left: 0,
            size: 0,
            keep: Keep::Nothing,
            kept: Vec::new(),
            next_name: None,
            members: Vec::new(),
            ovf: None,
            headers: 0,
        }
    }

    /// Reads the next bytes.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match self.state {
                State::End | State::Invalid => return,
                State::Header => {
                    let n = (512 - self.header.len()).min(data.len());
                    self.header.extend_from_slice(&data[..n]);
                    data = &data[n..];
                    if self.header.len() == 512 {
                        let h = std::mem::take(&mut self.header);
                        self.read_header(&h);
                    }
                }
                State::Data => {
                    let n = usize::try_from(self.left)
                        .unwrap_or(usize::MAX)
                        .min(data.len());
                    let padding = self.size.div_ceil(512) * 512 - self.size;
                    let want = self.left.saturating_sub(padding);
                    if self.keep != Keep::Nothing && want > 0 {
                        let take = usize::try_from(want).unwrap_or(usize::MAX).min(n);
                        if self.kept.len() < MAX_OVF {
                            let room = MAX_OVF - self.kept.len();
                            self.kept.extend_from_slice(&data[..take.min(room)]);
                        }
                    }
                    self.left -= n as u64;
                    data = &data[n..];
                    if self.left == 0 {
                        self.end_member();
                    }
                }
            }
        }
    }

    fn read_header(&mut self, h: &[u8]) {
        if h.iter().all(|b| *b == 0) {
            self.state = if self.headers == 0 {
                State::Invalid
            } else {
                State::End
            };
            return;
        }
        let want = octal(&h[148..156]);
        let sum: u64 = h
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    u64::from(*b)
                }
            })
            .sum();
        let Some(size) = octal(&h[124..136]).filter(|_| want == Some(sum)) else {
            self.state = State::Invalid;
            return;
        };
        self.headers += 1;
        let flag = h[156];
        let mut name = cstr(&h[0..100]);
        if &h[257..262] == b"ustar" {
            let prefix = cstr(&h[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        if let Some(n) = self.next_name.take() {
            name = n;
        }
        self.keep = match flag {
            b'L' => Keep::LongName,
            b'x' => Keep::Pax,
            b'0' | 0 | b'7' => {
                self.members.push((name.clone(), size));
                if self.ovf.is_none() && is_ovf(&name) {
                    Keep::Ovf
                } else {
                    Keep::Nothing
                }
            }
            _ => Keep::Nothing,
        };
        self.kept.clear();
        self.size = size;
        self.left = size.div_ceil(512) * 512;
        if self.left == 0 {
            self.end_member();
        } else {
            self.state = State::Data;
        }
    }

    fn end_member(&mut self) {
        let kept = std::mem::take(&mut self.kept);
        match self.keep {
            Keep::Ovf => self.ovf = Some(kept),
            Keep::LongName => self.next_name = Some(cstr(&kept)),
            Keep::Pax => self.next_name = pax_path(&kept),
            Keep::Nothing => {}
        }
        self.keep = Keep::Nothing;
        self.state = State::Header;
    }

    /// What was read: `None` for what is not a tar archive.
    pub fn finish(self) -> Option<OvaContent> {
        if self.state == State::Invalid || self.headers == 0 {
            return None;
        }
        Some(OvaContent {
            ovf: self.ovf.map(|b| String::from_utf8_lossy(&b).into_owned()),
            members: self.members,
        })
    }
}
