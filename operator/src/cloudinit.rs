//! Inline cloud-init user data read into PVE's own cloud-init options.
//!
//! PVE's API cannot upload a snippet, so a `#cloud-config` document given
//! inline cannot reach the guest as written. What PVE's options express
//! is taken over: the default user (`ciuser`), its SSH keys (`sshkeys`)
//! and password (`cipassword`), and a hostname equal to the VM's name
//! (PVE names the guest after the VM). Everything else (`packages`,
//! `write_files`, `runcmd`, a second user, ...) is listed as refused, and
//! the Machine's `CloudInitConfigured` condition says so: nothing is
//! dropped silently. A snippet already on a storage is used whole through
//! `cloudInit.userDataVolume` (`cicustom`).

use serde_yaml::Value;

/// What of the user data PVE's options carry, and what they cannot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapped {
    /// `ciuser`.
    pub user: Option<String>,
    /// `sshkeys`.
    pub ssh_keys: Vec<String>,
    /// `cipassword` (plain or hashed; PVE hashes a plain one).
    pub password: Option<String>,
    /// The parts PVE's options cannot express, by key.
    pub refused: Vec<String>,
}

/// Why user data cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum UserDataError {
    /// Not YAML.
    #[error("{0}")]
    Yaml(#[from] serde_yaml::Error),
    /// YAML, but not a mapping.
    #[error("user data must be a #cloud-config mapping")]
    NotAMapping,
}

fn strings(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Sequence(a) => a.iter().map(|x| x.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

/// Reads `text` (a `#cloud-config` mapping) for the VM named `vm_name`.
///
/// # Errors
/// Not YAML, or not a mapping.
pub fn map_user_data(text: &str, vm_name: &str) -> Result<Mapped, UserDataError> {
    let v: Value = serde_yaml::from_str(text)?;
    let Value::Mapping(m) = v else {
        return Err(UserDataError::NotAMapping);
    };
    let mut out = Mapped::default();
    for (k, v) in &m {
        let key = k.as_str().unwrap_or_default();
        match key {
            "hostname" | "fqdn" => {
                let h = v.as_str().unwrap_or_default();
                let short = h.split('.').next().unwrap_or_default();
                if short != vm_name {
                    out.refused.push(format!(
                        "{key} '{h}' (PVE names the guest after the VM, '{vm_name}')"
                    ));
                }
            }
            "manage_etc_hosts" if v.as_bool() == Some(true) => {}
            "ssh_authorized_keys" => match strings(v) {
                Some(k) => out.ssh_keys.extend(k),
                None => out.refused.push(key.into()),
            },
            "password" => match v.as_str() {
                Some(p) => out.password = Some(p.into()),
                None => out.refused.push(key.into()),
            },
            "users" => users(v, &mut out),
            _ => out.refused.push(key.into()),
        }
    }
    Ok(out)
}

fn users(v: &Value, out: &mut Mapped) {
    let Some(list) = v.as_sequence() else {
        out.refused.push("users".into());
        return;
    };
    let mut named = 0;
    for u in list {
        match u {
            Value::String(s) if s == "default" => {}
            Value::Mapping(m) => {
                named += 1;
                if named > 1 {
                    out.refused
                        .push("users: a second user (PVE has one, ciuser)".into());
                    continue;
                }
                for (k, v) in m {
                    let key = k.as_str().unwrap_or_default();
                    match key {
                        "name" => out.user = v.as_str().map(str::to_string),
                        "ssh_authorized_keys" | "ssh-authorized-keys" => match strings(v) {
                            Some(k) => out.ssh_keys.extend(k),
                            None => out.refused.push(format!("users[].{key}")),
                        },
                        "plain_text_passwd" | "passwd" => {
                            out.password = v.as_str().map(str::to_string);
                        }
                        _ => out.refused.push(format!("users[].{key}")),
                    }
                }
            }
            _ => out
                .refused
                .push("users: an entry that is not a user".into()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_user_and_keys_map_and_the_rest_is_refused() {
        let m = map_user_data(
            "#cloud-config\nhostname: web-server\nusers:\n  - name: ubuntu\n    ssh_authorized_keys:\n      - \"ssh-ed25519 AAAA...\"\npackages:\n  - nginx\n",
            "web-server",
        )
        .unwrap();
        assert_eq!(m.user.as_deref(), Some("ubuntu"));
        assert_eq!(m.ssh_keys, ["ssh-ed25519 AAAA..."]);
        assert_eq!(m.refused, ["packages"]);
    }

    #[rstest::rstest]
    #[case("hostname: other\n", "hostname 'other'")]
    #[case("write_files: []\n", "write_files")]
    #[case("users: [{ name: a }, { name: b }]\n", "a second user")]
    #[case("users: [{ name: a, sudo: ALL }]\n", "users[].sudo")]
    fn what_pve_cannot_express_is_named(#[case] y: &str, #[case] want: &str) {
        let m = map_user_data(y, "vm").unwrap();
        assert!(
            m.refused.iter().any(|r| r.contains(want)),
            "{:?}",
            m.refused
        );
    }

    #[test]
    fn a_password_and_top_level_keys_map() {
        let m = map_user_data("password: s3cret\nssh_authorized_keys: [k1, k2]\n", "vm").unwrap();
        assert_eq!(m.password.as_deref(), Some("s3cret"));
        assert_eq!(m.ssh_keys, ["k1", "k2"]);
        assert!(m.refused.is_empty());
    }
}
