//! The embedded API schema (`pve-schema`) as the client uses it: which
//! release describes a server, pvesh-style usage text for a path, and
//! what a directory's children are and allow (for `pve usage` and
//! `pve ls`). Nothing here needs HTTP.

use std::collections::BTreeMap;
use std::fmt::Write as _;

pub use pve_schema::{Endpoint, Format, Prop, Release, Spec};
use serde_json::Value;

use crate::error::{Error, Result};

/// The schema release for a `/version` release (`8.4`, `9.1`, `9.2.11`,
/// ...): the embedded 8.4 schema for any 8.x, 9.1 for 9.0 and 9.1,
/// otherwise 9.2 (the newest embedded one).
pub fn release_for(release: &str) -> Release {
    let mut parts = release.trim().split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(8), _) => Release::V8_4,
        (Some(9), Some(0 | 1)) => Release::V9_1,
        _ => Release::V9_2,
    }
}

/// The schema's name of a release (`8.4`, `9.1`, `9.2`).
pub fn release_name(release: Release) -> &'static str {
    match release {
        Release::V8_4 => "8.4",
        Release::V9_1 => "9.1",
        Release::V9_2 => "9.2",
    }
}

/// The methods in the order pvesh shows them, with the `pve` verb of
/// each.
pub const VERBS: [(&str, &str); 4] = [
    ("GET", "get"),
    ("POST", "create"),
    ("PUT", "set"),
    ("DELETE", "delete"),
];

/// The segments of an API path (`/nodes/pve/` is `["nodes", "pve"]`).
pub fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The endpoints of a path, one per method, in [`VERBS`] order.
pub fn methods<'a>(spec: &'a Spec, path: &str) -> Vec<&'a Endpoint> {
    let segs = segments(path);
    VERBS
        .iter()
        .filter_map(|(m, _)| spec.find(m, &segs).map(|f| f.endpoint))
        .collect()
}

/// The `pve` verb of an HTTP method.
fn verb(method: &str) -> &'static str {
    VERBS
        .iter()
        .find(|(m, _)| *m == method)
        .map_or("get", |(_, v)| v)
}

/// The placeholders of a path template.
fn path_params(template: &str) -> Vec<&str> {
    template
        .split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How a property's value is written: its `typetext`, or `<type>`.
fn typetext(p: &Prop) -> String {
    if let Some(t) = &p.typetext {
        return t.clone();
    }
    match &p.enumeration {
        Some(values) => format!(
            "<{}>",
            values.iter().map(scalar).collect::<Vec<_>>().join(" | ")
        ),
        None => format!("<{}>", p.kind.as_deref().unwrap_or("string")),
    }
}

/// `required` or `optional`, the default and the allowed values.
fn summary(p: &Prop) -> String {
    let mut s = String::from(if p.optional { "optional" } else { "required" });
    if let Some(values) = &p.enumeration {
        let list: Vec<String> = values.iter().map(scalar).collect();
        let _ = write!(s, ", one of: {}", list.join(", "));
    }
    if let Some(d) = &p.default {
        let _ = write!(s, ", default: {}", scalar(d));
    }
    s
}

/// The checks `--verbose` adds: the named format or the keys of a
/// property string, pattern, lengths, range, indexed names.
fn details(name: &str, p: &Prop, indent: &str, out: &mut String) {
    if let Some(n) = p.max_index {
        let base = name.trim_end_matches("[n]");
        let _ = writeln!(
            out,
            "{indent}names: {base}0 .. {base}{}",
            n.saturating_sub(1)
        );
    }
    match &p.format {
        Some(Format::Named(f)) => {
            let _ = writeln!(out, "{indent}format: {f}");
        }
        Some(Format::Object(keys)) => {
            let _ = writeln!(out, "{indent}property string keys:");
            for (k, kp) in keys {
                if let Some(target) = &kp.alias {
                    let what = match &kp.key_alias {
                        Some(ka) => format!("{k}=<{target}> sets {ka}={k} and {target}"),
                        None => format!("{k}: alias of {target}"),
                    };
                    let _ = writeln!(out, "{indent}  {what}");
                    continue;
                }
                let mut line = format!("{indent}  {k}={}", typetext(kp));
                if kp.default_key {
                    line.push_str(" (the key may be left out)");
                }
                let _ = writeln!(out, "{line}");
                let _ = writeln!(out, "{indent}      {}", summary(kp));
                details(k, kp, &format!("{indent}      "), out);
            }
        }
        None => {}
    }
    if let Some(pattern) = &p.pattern {
        let _ = writeln!(out, "{indent}pattern: {pattern}");
    }
    match (p.min_length, p.max_length) {
        (Some(a), Some(b)) => {
            let _ = writeln!(out, "{indent}length: {a} - {b}");
        }
        (None, Some(b)) => {
            let _ = writeln!(out, "{indent}length: at most {b}");
        }
        (Some(a), None) => {
            let _ = writeln!(out, "{indent}length: at least {a}");
        }
        (None, None) => {}
    }
    let num = |v: f64| {
        if v.fract() == 0.0 {
            format!("{}", v as i64)
        } else {
            v.to_string()
        }
    };
    match (p.minimum, p.maximum) {
        (Some(a), Some(b)) => {
            let _ = writeln!(out, "{indent}range: {} - {}", num(a), num(b));
        }
        (Some(a), None) => {
            let _ = writeln!(out, "{indent}range: {} - N", num(a));
        }
        (None, Some(b)) => {
            let _ = writeln!(out, "{indent}range: at most {}", num(b));
        }
        (None, None) => {}
    }
}

/// pvesh-style usage of every method of `path` (a concrete path such as
/// `/nodes/pve/qemu`, or a template): one `USAGE: pve <verb> PATH
/// [OPTIONS]` line per method, with the required parameters, then each
/// parameter with its syntax, whether it is required, its default and
/// allowed values. `verbose` adds the permission check and the format
/// details (property-string keys, patterns, lengths, ranges).
///
/// # Errors
/// [`Error::NotFound`] when the schema has no such path.
pub fn usage(spec: &Spec, path: &str, verbose: bool) -> Result<String> {
    let eps = methods(spec, path);
    if eps.is_empty() {
        return Err(Error::NotFound {
            status: None,
            message: format!("no such resource '{path}'"),
        });
    }
    let mut out = String::new();
    for (i, ep) in eps.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let in_path = path_params(&ep.path);
        let params: Vec<(&String, &Prop)> = ep
            .parameters
            .properties
            .iter()
            .filter(|(k, _)| !in_path.contains(&k.as_str()))
            .collect();
        let (required, optional): (Vec<_>, Vec<_>) = params.iter().partition(|(_, p)| !p.optional);
        let mut line = format!("USAGE: pve {} {}", verb(&ep.method), ep.path);
        for (k, p) in &required {
            let _ = write!(line, " --{k} {}", typetext(p));
        }
        if !optional.is_empty() {
            line.push_str(" [OPTIONS]");
        }
        let _ = writeln!(out, "{line}");
        if verbose {
            let _ = writeln!(out, "  ({}; schema name {})", ep.method, ep.name);
            if !ep.permissions.is_null() {
                let _ = writeln!(out, "  permissions: {}", ep.permissions);
            }
            if !ep.allowtoken {
                let _ = writeln!(out, "  not available with API tokens");
            }
        }
        if !params.is_empty() {
            out.push('\n');
        }
        for (k, p) in required.iter().chain(&optional) {
            let _ = writeln!(out, "  --{k} {}", typetext(p));
            let _ = writeln!(out, "        {}", summary(p));
            if verbose {
                details(k, p, "        ", &mut out);
            }
        }
    }
    Ok(out)
}

/// Whether `template`'s segments match the first segments of `segs`.
fn template_matches(template: &str, segs: &[String]) -> bool {
    let t: Vec<&str> = template.split('/').filter(|s| !s.is_empty()).collect();
    t.len() == segs.len()
        && t.iter()
            .zip(segs)
            .all(|(t, s)| (t.starts_with('{') && t.ends_with('}')) || t == s)
}

/// A child of a directory, as `pve ls` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    /// Its name (the last path segment).
    pub name: String,
    /// pvesh's flags: `D` when it has children, then `r` (GET), `w`
    /// (PUT), `c` (POST), `d` (DELETE), `-` where absent.
    pub flags: String,
}

/// The flags of the path `segs` (see [`Child::flags`]).
pub fn flags(spec: &Spec, segs: &[String]) -> String {
    let has = |m: &str| spec.find(m, segs).is_some();
    let dir = spec.endpoints.iter().any(|e| {
        let t: Vec<&str> = e.path.split('/').filter(|s| !s.is_empty()).collect();
        t.len() > segs.len() && {
            let prefix = t[..segs.len()].join("/");
            template_matches(&prefix, segs)
        }
    });
    [
        (dir, 'D'),
        (has("GET"), 'r'),
        (has("PUT"), 'w'),
        (has("POST"), 'c'),
        (has("DELETE"), 'd'),
    ]
    .iter()
    .map(|(yes, c)| if *yes { *c } else { '-' })
    .collect()
}

/// The key naming a directory's items, from the `links` of its GET
/// endpoint's return schema (`{vmid}`, `{subdir}`, ...).
pub fn child_key(spec: &Spec, path: &str) -> Option<String> {
    spec.find("GET", &segments(path))?.endpoint.index_key()
}

/// The children of `path` from its directory listing `data`: the names
/// under the schema's link key (or, without one, the first of the usual
/// keys), each with its flags.
pub fn children(spec: &Spec, path: &str, data: &Value) -> Vec<Child> {
    const KEYS: &[&str] = &[
        "subdir", "name", "node", "storage", "vmid", "realm", "userid", "tokenid", "groupid",
        "roleid", "iface", "upid", "volid", "id",
    ];
    let key = child_key(spec, path);
    let name_of = |item: &Value| -> Option<String> {
        match item {
            Value::Object(o) => key
                .as_deref()
                .and_then(|k| o.get(k))
                .or_else(|| KEYS.iter().find_map(|k| o.get(*k)))
                .map(scalar),
            Value::Null => None,
            other => Some(scalar(other)),
        }
    };
    let names: Vec<String> = match data {
        Value::Array(items) => items.iter().filter_map(name_of).collect(),
        _ => Vec::new(),
    };
    let base = segments(path);
    names
        .into_iter()
        .map(|name| {
            let mut segs = base.clone();
            segs.push(name.clone());
            Child {
                flags: flags(spec, &segs),
                name,
            }
        })
        .collect()
}

/// The property-string keys of a parameter of an endpoint (`net0` finds
/// `net[n]`), for [`crate::propstring`].
pub fn param_format<'a>(
    spec: &'a Spec,
    method: &str,
    template: &str,
    param: &str,
) -> Option<&'a BTreeMap<String, Prop>> {
    let ep = spec.endpoint(method, template)?;
    match &pve_schema::validate::lookup(&ep.parameters.properties, param)?.format {
        Some(Format::Object(keys)) => Some(keys),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("8.4", Release::V8_4)]
    #[case("8.1", Release::V8_4)]
    #[case("9.1", Release::V9_1)]
    #[case("9.0", Release::V9_1)]
    #[case("9.1.5", Release::V9_1)]
    #[case("9.2", Release::V9_2)]
    #[case("9.2.11", Release::V9_2)]
    #[case("9.3", Release::V9_2)]
    #[case("10.0", Release::V9_2)]
    #[case("", Release::V9_2)]
    fn releases(#[case] text: &str, #[case] want: Release) {
        assert_eq!(release_for(text), want);
    }

    #[test]
    fn usage_of_startall() {
        let spec = pve_schema::spec(Release::V9_1);
        let u = usage(spec, "/nodes/pve/startall", false).expect("known path");
        assert!(
            u.starts_with("USAGE: pve create /nodes/{node}/startall [OPTIONS]\n"),
            "{u}"
        );
        assert!(
            u.contains("\n  --force <boolean>\n        optional, default: off\n"),
            "{u}"
        );
        assert!(u.contains("\n  --max-workers <integer>"), "{u}");
        // 8.4 has no max-workers.
        let old = usage(
            pve_schema::spec(Release::V8_4),
            "/nodes/pve/startall",
            false,
        )
        .expect("known path");
        assert!(!old.contains("max-workers"), "{old}");
    }

    /// A path 9.2 added has usage in 9.2's schema and none in 9.1's.
    #[test]
    fn usage_follows_the_release() {
        let path = "/cluster/qemu/custom-cpu-models";
        let u = usage(pve_schema::spec(Release::V9_2), path, false).expect("a 9.2 path");
        assert!(
            u.contains("USAGE: pve get /cluster/qemu/custom-cpu-models\n"),
            "{u}"
        );
        let e = usage(pve_schema::spec(Release::V9_1), path, false).expect_err("not in 9.1");
        assert_eq!(
            e.message(),
            "no such resource '/cluster/qemu/custom-cpu-models'"
        );
        for r in [Release::V8_4, Release::V9_1, Release::V9_2] {
            assert_eq!(release_for(release_name(r)), r);
        }
    }

    #[test]
    fn usage_of_a_vm_create_names_required_and_formats() {
        let spec = pve_schema::spec(Release::V9_1);
        let u = usage(spec, "/nodes/pve/qemu", true).expect("known path");
        assert!(
            u.contains("USAGE: pve get /nodes/{node}/qemu [OPTIONS]\n"),
            "{u}"
        );
        assert!(
            u.contains("USAGE: pve create /nodes/{node}/qemu --vmid <integer> (100 - 999999999) [OPTIONS]\n"),
            "{u}"
        );
        assert!(u.contains("        names: net0 .. net31\n"), "{u}");
        assert!(u.contains("        property string keys:\n"), "{u}");
        assert!(
            u.contains("          virtio=<macaddr> sets model=virtio and macaddr\n"),
            "{u}"
        );
        assert!(
            u.contains(
                "          tag=<integer>\n              optional\n              range: 1 - 4094\n"
            ),
            "{u}"
        );
        assert!(u.contains("permissions: "), "{u}");
        let e = usage(spec, "/nodes/pve/nothing", false).expect_err("unknown");
        assert_eq!(e.message(), "no such resource '/nodes/pve/nothing'");
    }

    #[test]
    fn children_and_flags() {
        let spec = pve_schema::spec(Release::V9_1);
        assert_eq!(child_key(spec, "/nodes/pve/qemu").as_deref(), Some("vmid"));
        let kids = children(
            spec,
            "/nodes",
            &serde_json::json!([{"node": "pve", "status": "online"}]),
        );
        assert_eq!(
            kids,
            [Child {
                name: "pve".into(),
                flags: "Dr---".into()
            }]
        );
        assert_eq!(flags(spec, &segments("/version")), "-r---");
        assert_eq!(flags(spec, &segments("/access/users/ci@pve")), "Drw-d");
        assert_eq!(flags(spec, &segments("/access/acl")), "-rw--");
    }
}
