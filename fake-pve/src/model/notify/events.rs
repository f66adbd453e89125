//! What PVE notifies, raised where the model sees it happen: a backup
//! task's end (pve-manager `VZDump.pm` `send_notification`: template
//! `vzdump`, fields `type=vzdump`, `hostname`, `job-id` for a job;
//! severity `error` when anything failed), a replication job's failure
//! (`API2/Replication.pm`: template `replication`, fields
//! `type=replication`, `job-id`, `hostname`; at the first three failures,
//! then after 1, 2, 4 ... days of retries), and the package updates an
//! `apt/update` with `notify=1` finds (`API2/APT.pm`: template
//! `package-updates`, `type=package-updates`, `hostname`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Notification, Severity};
use crate::model::cluster::Cluster;

/// How a backup task notifies at its end: its job, `mailto`,
/// `mailnotification` (`always`/`failure`) and `notification-mode`
/// (`auto`, `legacy-sendmail`, `notification-system`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupNotice {
    /// The backup job that started the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// `mailto`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mailto: Vec<String>,
    /// `mailnotification`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// `notification-mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// A replication job's failure, as `_handle_job_err` sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicationFailure {
    /// The job.
    pub id: String,
    /// The target node.
    pub target: String,
    /// The schedule (`*/15` when not set).
    pub schedule: String,
    /// Failures in a row, this one included.
    pub fail_count: u32,
    /// The last successful sync, epoch seconds (0: never).
    pub last_sync: i64,
    /// The error.
    pub error: String,
    /// The node that ran it.
    pub node: String,
    /// When, epoch seconds.
    pub at: i64,
}

/// `_should_mail_at_failcount`: the first three failures, then after
/// 48, 96, 192 ... retries (1, 2, 4 ... days).
pub fn should_notify_at(fail_count: u32) -> bool {
    if fail_count == 0 {
        return false;
    }
    if fail_count <= 3 {
        return true;
    }
    let mut i: u64 = 1;
    while i * 48 < u64::from(fail_count) {
        i *= 2;
    }
    i * 48 == u64::from(fail_count)
}

/// A UTC time as the templates print it.
fn stamp(t: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(t).map_or_else(
        |_| t.to_string(),
        |d| {
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                d.year(),
                u8::from(d.month()),
                d.day(),
                d.hour(),
                d.minute(),
                d.second()
            )
        },
    )
}

impl Cluster {
    /// The users' mail addresses, for `mailto-user`.
    fn user_emails(&self) -> BTreeMap<String, String> {
        self.access
            .users()
            .iter()
            .filter_map(|(id, u)| u.email.clone().map(|m| (id.clone(), m)))
            .collect()
    }

    /// Sends a notification through the matchers.
    pub(crate) fn send_notification(&mut self, n: &Notification) {
        let emails = self.user_emails();
        self.notifications.notify(n, &|u| emails.get(u).cloned());
    }

    /// A backup task ended on `node` at `end` (epoch seconds): `error`
    /// is why it failed; `lines` its log.
    pub(crate) fn notify_backup(
        &mut self,
        node: &str,
        notice: &BackupNotice,
        error: Option<&str>,
        lines: &[String],
        end: i64,
    ) {
        let failed = error.is_some();
        let mut status = if failed {
            "backup failed".to_string()
        } else {
            "backup successful".to_string()
        };
        if let Some(e) = error {
            if e.contains('\n') {
                status.push_str(": multiple problems");
            } else {
                status.push_str(&format!(": {e}"));
            }
        }
        let mut fields = BTreeMap::from([
            ("type".to_string(), "vzdump".to_string()),
            ("hostname".to_string(), node.to_string()),
        ]);
        if let Some(id) = &notice.job_id {
            fields.insert("job-id".into(), id.clone());
        }
        let n = Notification {
            severity: if failed {
                Severity::Error
            } else {
                Severity::Info
            },
            template: "vzdump".into(),
            title: format!("vzdump backup status ({node}): {status}"),
            message: format!(
                "{}Logs\n====\n{}\n",
                error.map(|e| format!("{e}\n\n")).unwrap_or_default(),
                lines.join("\n")
            ),
            fields,
            timestamp: end,
        };
        let mode = notice.mode.as_deref().unwrap_or("auto");
        let email = !notice.mailto.is_empty();
        if (mode == "auto" && email) || mode == "legacy-sendmail" {
            let policy = notice.policy.as_deref().unwrap_or("always");
            if email && (policy == "always" || (policy == "failure" && failed)) {
                self.notifications.legacy_mail(&n, &notice.mailto);
            }
        } else {
            self.send_notification(&n);
        }
    }

    /// A replication job failed.
    pub(crate) fn notify_replication(&mut self, f: &ReplicationFailure) {
        if !should_notify_at(f.fail_count) {
            return;
        }
        let last = if f.last_sync > 0 {
            stamp(f.last_sync)
        } else {
            "never".into()
        };
        let n = Notification {
            severity: Severity::Error,
            template: "replication".into(),
            title: format!("Replication Job: '{}' failed", f.id),
            message: format!(
                "Replication job '{}' with target '{}' and schedule '{}' failed!\n\n\
                 Last successful sync: {last}\nFailure count: {}\n\nError:\n{}\n",
                f.id, f.target, f.schedule, f.fail_count, f.error
            ),
            fields: BTreeMap::from([
                ("type".to_string(), "replication".to_string()),
                ("job-id".to_string(), f.id.clone()),
                ("hostname".to_string(), f.node.clone()),
            ]),
            timestamp: f.at,
        };
        self.send_notification(&n);
    }

    /// `apt/update` with `notify=1` found updates on `node`: `packages`
    /// as (name, installed, available); each version is notified once
    /// (`NotifyStatus`).
    pub fn notify_updates(&mut self, node: &str, packages: &[(String, String, String)], now: i64) {
        let packages: Vec<&(String, String, String)> = packages
            .iter()
            .filter(|(name, _, new)| self.notifications.first_update_notice(node, name, new))
            .collect();
        if packages.is_empty() {
            return;
        }
        let mut message = String::from("The following updates are available:\n\n");
        for (name, old, new) in packages {
            message.push_str(&format!("{name}: {old} -> {new}\n"));
        }
        let n = Notification {
            severity: Severity::Info,
            template: "package-updates".into(),
            title: format!("New software packages available ({node})"),
            message,
            fields: BTreeMap::from([
                ("type".to_string(), "package-updates".to_string()),
                ("hostname".to_string(), node.to_string()),
            ]),
            timestamp: now,
        };
        self.send_notification(&n);
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case(0, false)]
    #[case(1, true)]
    #[case(3, true)]
    #[case(4, false)]
    #[case(47, false)]
    #[case(48, true)]
    #[case(96, true)]
    #[case(144, false)]
    #[case(192, true)]
    fn replication_failures_notify_at_the_first_three_then_by_doubling_days(
        #[case] count: u32,
        #[case] notify: bool,
    ) {
        assert_eq!(should_notify_at(count), notify);
    }
}
