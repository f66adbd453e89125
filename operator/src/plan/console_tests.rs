use std::collections::BTreeMap;

fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

#[rstest::rstest]
#[case(&[("name", "web")], &["novnc"], "novnc=1&resize=off")]
#[case(&[("name", "web"), ("vga", "qxl"), ("serial0", "socket")], &["novnc", "spice", "xtermjs"], "novnc=1")]
#[case(&[("name", "web"), ("vga", "type=qxl2,memory=32")], &["novnc", "spice"], "novnc=1")]
#[case(&[("name", "web"), ("vga", "serial0"), ("serial0", "socket")], &["xtermjs"], "xtermjs=1")]
fn consoles_follow_the_display_and_serial_ports(
    #[case] c: &[(&str, &str)],
    #[case] types: &[&str],
    #[case] kind: &str,
) {
    let info = super::console("https://pve:8006", "pve1", 100, &cfg(c));
    assert_eq!(info.types, types);
    assert!(
        info.url.starts_with("https://pve:8006/?console=kvm&"),
        "{}",
        info.url
    );
    assert!(info.url.contains(kind), "{}", info.url);
    assert!(
        info.url.ends_with("&vmid=100&vmname=web&node=pve1&cmd="),
        "{}",
        info.url
    );
}
