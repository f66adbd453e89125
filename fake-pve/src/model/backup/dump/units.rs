//! Sizes and durations as the tools a backup runs print them in its
//! log.

/// `render_bytes($v, 1)`.
pub(super) fn render_bytes(bytes: u64) -> String {
    binary_units(bytes, 1)
}

/// A size in binary units with `precision` decimals (`403.456 MiB` with
/// 3, as PBS's `HumanByte` prints it); bytes plain.
pub(super) fn binary_units(bytes: u64, precision: usize) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.precision$} {}", units[i])
    }
}

/// `format_size` of `VZDump.pm`: `731MB`, `1.02GB`.
pub(super) fn format_size(bytes: u64) -> String {
    let kb = bytes as f64 / 1024.0;
    if kb < 1024.0 {
        return format!("{}KB", kb as u64);
    }
    let mb = kb / 1024.0;
    if mb < 1024.0 {
        return format!("{}MB", mb as u64);
    }
    let gb = mb / 1024.0;
    if gb < 1024.0 {
        return format!("{gb:.2}GB");
    }
    format!("{:.2}TB", gb / 1024.0)
}

/// GNU tar's `--totals` sizes: `9.8KiB`, `47MiB`, `1.1GiB`.
pub(crate) fn tar_human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes}B")
    } else if v < 10.0 {
        format!("{:.1}{}", (v * 10.0).ceil() / 10.0, units[i])
    } else {
        format!("{}{}", v.ceil(), units[i])
    }
}

/// rsync's `-h` sizes (powers of 1000): `812`, `1.37G`.
pub(super) fn rsync_human(bytes: u64) -> String {
    let units = ['K', 'M', 'G', 'T', 'P'];
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    if v < 1000.0 {
        return bytes.to_string();
    }
    let mut i = 0;
    v /= 1000.0;
    while v >= 1000.0 && i + 1 < units.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.2}{}", units[i])
}

/// `H:MM:SS` of a duration as `Finished Backup of VM` prints it.
pub(super) fn hms(secs: i64) -> String {
    let s = secs.max(0);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}
