//! The permission checks on guests that PVE makes in handlers: on one
//! guest or its pool (`check_vm_perm`), and those of the calls that act
//! on a list of guests at once (the schema says `user: all`): the
//! node-wide `startall`, `stopall`, `suspendall`, `migrateall`
//! (pve-manager `API2/Nodes.pm`) and the cluster's bulk actions
//! (`API2/Cluster/BulkAction/Guest.pm`, `check_guest_permissions`).

use super::{Access, AuthId};
use crate::model::{Error, Result};

impl Access {
    /// `check_vm_perm` (pve-access-control `RPCEnvironment.pm`): `privs`
    /// on the pool if one is given, else on `/vms/<vmid>`; `any` wants one
    /// of them rather than all.
    ///
    /// # Errors
    /// 403 `Permission check failed (/vms/<vmid>, <privilege>)`, the
    /// privileges joined by `|` with `any`.
    pub fn check_vm_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        privs: &[&str],
        any: bool,
    ) -> Result<()> {
        let holds = |path: &str| {
            if any {
                self.has_any(who, path, privs)
            } else {
                privs.iter().all(|p| self.has_priv(who, path, p))
            }
        };
        if let Some(pool) = pool.filter(|p| !p.is_empty())
            && holds(&format!("/pool/{pool}"))
        {
            return Ok(());
        }
        let path = format!("/vms/{vmid}");
        if any {
            self.check_any(who, &path, privs)
        } else {
            self.check_perm(who, &path, privs)
        }
    }

    /// `Nodes.pm`'s check: every privilege of `on_root` on `/` lets the
    /// call act on any guest; otherwise each guest listed in `vms` needs
    /// `per_guest` on `/vms/<id>`, and without a list the call is refused
    /// naming `/` and `on_root` joined by ` && `.
    ///
    /// # Errors
    /// 403 `Permission check failed (/vms/<id>, <privilege>)` for the
    /// first listed guest without it, `Permission check failed (/,
    /// VM.PowerMgmt && VM.Config.Disk)` without a list.
    pub fn check_node_guests(
        &self,
        who: &AuthId,
        vms: &[u32],
        on_root: &[&str],
        per_guest: &str,
    ) -> Result<()> {
        if on_root.iter().all(|p| self.has_priv(who, "/", p)) {
            return Ok(());
        }
        if vms.is_empty() {
            return Err(Error::Forbidden(format!(
                "Permission check failed (/, {})",
                on_root.join(" && ")
            )));
        }
        vms.iter()
            .try_for_each(|id| self.check_perm(who, &format!("/vms/{id}"), &[per_guest]))
    }

    /// `BulkAction/Guest.pm`'s `check_guest_permissions`: each listed
    /// guest needs every privilege of `privs` on `/vms/<id>`; without a
    /// list, all of them on `/`.
    ///
    /// # Errors
    /// 403 `Permission check failed (/vms/<id>, <privilege>)` for the
    /// first listed guest without one, `Permission check failed (/,
    /// <privileges joined by ", ">)` without a list.
    pub fn check_bulk_guests(&self, who: &AuthId, vms: &[u32], privs: &[&str]) -> Result<()> {
        if vms.is_empty() {
            if privs.iter().all(|p| self.has_priv(who, "/", p)) {
                return Ok(());
            }
            return Err(Error::Forbidden(format!(
                "Permission check failed (/, {})",
                privs.join(", ")
            )));
        }
        vms.iter()
            .try_for_each(|id| self.check_perm(who, &format!("/vms/{id}"), privs))
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::super::User;
    use super::*;

    /// `ann@pve` with PVEVMUser on `/vms/100`, `op@pve` with
    /// PVEVMAdmin on `/`.
    fn access() -> Access {
        let mut a = Access::default();
        for u in ["root@pam", "ann@pve", "op@pve"] {
            a.put_user(User::new(u));
        }
        a.grant("/vms/100", "PVEVMUser", "ann@pve");
        a.grant("/", "PVEVMAdmin", "op@pve");
        a
    }

    fn user(u: &str) -> AuthId {
        AuthId::User(u.into())
    }

    fn refusal(r: Result<()>) -> Option<String> {
        match r {
            Ok(()) => None,
            Err(Error::Forbidden(m)) => Some(m),
            Err(e) => Some(format!("unexpected {e:?}")),
        }
    }

    #[rstest]
    #[case("ann@pve", &[100], &["VM.PowerMgmt"], "VM.PowerMgmt", None)]
    #[case("ann@pve", &[100, 102], &["VM.PowerMgmt"], "VM.PowerMgmt",
        Some("Permission check failed (/vms/102, VM.PowerMgmt)"))]
    #[case("ann@pve", &[], &["VM.PowerMgmt"], "VM.PowerMgmt",
        Some("Permission check failed (/, VM.PowerMgmt)"))]
    #[case("ann@pve", &[], &["VM.PowerMgmt", "VM.Config.Disk"], "VM.PowerMgmt",
        Some("Permission check failed (/, VM.PowerMgmt && VM.Config.Disk)"))]
    #[case("ann@pve", &[100], &["VM.Migrate"], "VM.Migrate",
        Some("Permission check failed (/vms/100, VM.Migrate)"))]
    #[case("op@pve", &[], &["VM.PowerMgmt", "VM.Config.Disk"], "VM.PowerMgmt", None)]
    #[case("op@pve", &[100, 102], &["VM.Migrate"], "VM.Migrate", None)]
    #[case("root@pam", &[], &["VM.Migrate"], "VM.Migrate", None)]
    fn node_wide_calls(
        #[case] who: &str,
        #[case] vms: &[u32],
        #[case] on_root: &[&str],
        #[case] per_guest: &str,
        #[case] refused: Option<&str>,
    ) {
        let a = access();
        assert_eq!(
            refusal(a.check_node_guests(&user(who), vms, on_root, per_guest)).as_deref(),
            refused
        );
    }

    #[rstest]
    #[case("ann@pve", &[100], &["VM.PowerMgmt"], None)]
    #[case("ann@pve", &[102, 100], &["VM.PowerMgmt"],
        Some("Permission check failed (/vms/102, VM.PowerMgmt)"))]
    #[case("ann@pve", &[], &["VM.PowerMgmt"], Some("Permission check failed (/, VM.PowerMgmt)"))]
    #[case("ann@pve", &[100], &["VM.PowerMgmt", "VM.Config.Disk"],
        Some("Permission check failed (/vms/100, VM.Config.Disk)"))]
    #[case("op@pve", &[], &["VM.PowerMgmt", "VM.Config.Disk"], None)]
    #[case("nobody@pve", &[], &["VM.Migrate"], Some("Permission check failed (/, VM.Migrate)"))]
    fn bulk_actions(
        #[case] who: &str,
        #[case] vms: &[u32],
        #[case] privs: &[&str],
        #[case] refused: Option<&str>,
    ) {
        let a = access();
        assert_eq!(
            refusal(a.check_bulk_guests(&user(who), vms, privs)).as_deref(),
            refused
        );
    }
}
