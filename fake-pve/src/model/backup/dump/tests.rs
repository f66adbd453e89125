use super::units::{format_size, hms, render_bytes};
use super::*;
use rstest::rstest;

#[rstest]
#[case("{{guestname}} on {{node}}", Ok(()))]
#[case("a\\nb \\\\ c", Ok(()))]
#[case("x\ny", Err("contains a line feed".to_string()))]
#[case("{{nope}}", Err("found unknown: variable 'nope' at char 2".to_string()))]
#[case("a\\tb", Err("found unknown: escape sequence '\\t' at char 1".to_string()))]
fn notes_templates(#[case] t: &str, #[case] want: std::result::Result<(), String>) {
    assert_eq!(verify_notes_template(t).map_err(|e| e.to_string()), want);
}

#[test]
fn notes_are_filled() {
    assert_eq!(
        render_notes(
            "{{guestname}}\\n{{vmid}}@{{cluster}}",
            "lab",
            "web",
            "pve",
            100
        ),
        "web\n100@lab"
    );
}

#[test]
fn sizes_as_vzdump_prints_them() {
    assert_eq!(format_size(500 << 10), "500KB");
    assert_eq!(format_size(731 << 20), "731MB");
    assert_eq!(format_size(1_095_216_660), "1.02GB");
    assert_eq!(render_bytes(8 << 30), "8.0 GiB");
    assert_eq!(hms(3725), "01:02:05");
}
