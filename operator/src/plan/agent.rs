//! Addresses the guest agent reports.

/// Addresses worth reporting from `agent/network-get-interfaces`: no
/// loopback, no link-local.
pub fn agent_ips(answer: &serde_json::Value) -> Vec<String> {
    let list = answer
        .get("result")
        .and_then(|r| r.as_array())
        .or_else(|| answer.as_array());
    let mut out = Vec::new();
    for iface in list.into_iter().flatten() {
        if iface.get("name").and_then(|n| n.as_str()) == Some("lo") {
            continue;
        }
        let addrs = iface.get("ip-addresses").and_then(|a| a.as_array());
        for a in addrs.into_iter().flatten() {
            let Some(ip) = a.get("ip-address").and_then(|i| i.as_str()) else {
                continue;
            };
            let Ok(parsed) = ip.parse::<std::net::IpAddr>() else {
                continue;
            };
            let skip = match parsed {
                std::net::IpAddr::V4(v) => v.is_loopback() || v.is_link_local(),
                std::net::IpAddr::V6(v) => v.is_loopback() || (v.segments()[0] & 0xffc0) == 0xfe80,
            };
            if !skip && !out.contains(&ip.to_string()) {
                out.push(ip.to_string());
            }
        }
    }
    out
}
