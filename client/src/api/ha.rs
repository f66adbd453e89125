//! `/cluster/ha`: HA resources, groups (8.x), rules (9.x) and the HA
//! manager's status.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::ha::HaResourceConfig;
//!
//! let ha = client.ha();
//! ha.create("vm:100", &HaResourceConfig::default().state("started")).await?;
//! let status = ha.status().await?;
//! # let _ = status;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The `/cluster/ha` area; see [`Client::ha`].
#[derive(Debug, Clone, Copy)]
pub struct Ha<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/ha` calls.
    pub fn ha(&self) -> Ha<'_> {
        Ha { client: self }
    }
}

/// An HA resource as `GET /cluster/ha/resources/{sid}` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HaResource {
    /// `vm:100`, `ct:101`.
    pub sid: String,
    /// `vm` or `ct`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The requested state, when set (`started` when not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[8.x\] the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// \[9.x\] automatic failback.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub failback: Option<bool>,
    /// \[9.2\] whether automatic rebalancing may move it.
    #[serde(
        default,
        rename = "auto-rebalance",
        deserialize_with = "de::opt_bool01"
    )]
    pub auto_rebalance: Option<bool>,
    /// Restarts on the same node before a relocation.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub max_restart: Option<u64>,
    /// Relocations before the service is in error.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub max_relocate: Option<u64>,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The digest of `resources.cfg`.
    #[serde(default)]
    pub digest: String,
    /// Anything else (`errors`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The settings of `create` and `update` of a resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HaResourceConfig {
    /// `state`: `started`, `stopped`, `disabled`, `ignored`.
    pub state: Option<String>,
    /// \[8.x\] `group`.
    pub group: Option<String>,
    /// \[9.x\] `failback`.
    pub failback: Option<bool>,
    /// \[9.2\] `auto-rebalance`.
    pub auto_rebalance: Option<bool>,
    /// `max_restart`.
    pub max_restart: Option<u64>,
    /// `max_relocate`.
    pub max_relocate: Option<u64>,
    /// `comment`.
    pub comment: Option<String>,
    /// \[update\] options to remove.
    pub delete: Vec<String>,
    /// \[update\] the digest the change is based on.
    pub digest: Option<String>,
}

impl HaResourceConfig {
    /// Sets the requested state.
    #[must_use]
    pub fn state(mut self, state: &str) -> Self {
        self.state = Some(state.into());
        self
    }

    /// Sets the group (8.x).
    #[must_use]
    pub fn group(mut self, group: &str) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Sets failback (9.x).
    #[must_use]
    pub fn failback(mut self, yes: bool) -> Self {
        self.failback = Some(yes);
        self
    }

    /// Lets automatic rebalancing move it, or not (9.2).
    #[must_use]
    pub fn auto_rebalance(mut self, yes: bool) -> Self {
        self.auto_rebalance = Some(yes);
        self
    }

    /// Sets the restart and relocate counts.
    #[must_use]
    pub fn tries(mut self, max_restart: u64, max_relocate: u64) -> Self {
        self.max_restart = Some(max_restart);
        self.max_relocate = Some(max_relocate);
        self
    }

    /// Sets the comment.
    #[must_use]
    pub fn comment(mut self, comment: &str) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// Removes options.
    #[must_use]
    pub fn delete(mut self, keys: &[&str]) -> Self {
        self.delete = keys.iter().map(|k| (*k).to_string()).collect();
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .opt("state", self.state.as_deref())
            .opt("group", self.group.as_deref())
            .opt("failback", self.failback)
            .opt("auto-rebalance", self.auto_rebalance)
            .opt("max_restart", self.max_restart)
            .opt("max_relocate", self.max_relocate)
            .opt("comment", self.comment.as_deref())
            .opt(
                "delete",
                (!self.delete.is_empty()).then(|| self.delete.join(",")),
            )
            .opt("digest", self.digest.as_deref())
    }
}

/// An HA group (8.x).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HaGroup {
    /// The group ID.
    pub group: String,
    /// `node[:priority]` entries.
    #[serde(default, deserialize_with = "de::list")]
    pub nodes: Vec<String>,
    /// Whether resources may only run on the group's nodes.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub restricted: Option<bool>,
    /// Whether failback is off.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub nofailback: Option<bool>,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The digest of `groups.cfg`.
    #[serde(default)]
    pub digest: String,
}

/// The settings of `create` and `update` of a group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HaGroupConfig {
    /// `nodes`: `node[:priority]` entries.
    pub nodes: Vec<String>,
    /// `restricted`.
    pub restricted: Option<bool>,
    /// `nofailback`.
    pub nofailback: Option<bool>,
    /// `comment`.
    pub comment: Option<String>,
    /// \[update\] options to remove.
    pub delete: Vec<String>,
}

impl HaGroupConfig {
    /// A group of these `node[:priority]` entries.
    pub fn nodes(nodes: &[&str]) -> Self {
        Self {
            nodes: nodes.iter().map(|n| (*n).to_string()).collect(),
            ..Self::default()
        }
    }

    /// Sets `restricted`.
    #[must_use]
    pub fn restricted(mut self, yes: bool) -> Self {
        self.restricted = Some(yes);
        self
    }

    /// Sets `nofailback`.
    #[must_use]
    pub fn nofailback(mut self, yes: bool) -> Self {
        self.nofailback = Some(yes);
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .opt(
                "nodes",
                (!self.nodes.is_empty()).then(|| self.nodes.join(",")),
            )
            .opt("restricted", self.restricted)
            .opt("nofailback", self.nofailback)
            .opt("comment", self.comment.as_deref())
            .opt(
                "delete",
                (!self.delete.is_empty()).then(|| self.delete.join(",")),
            )
    }
}

/// An HA rule (9.x).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HaRule {
    /// The rule ID.
    pub rule: String,
    /// `node-affinity` or `resource-affinity`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The resources.
    #[serde(default, deserialize_with = "de::list")]
    pub resources: Vec<String>,
    /// \[node-affinity\] `node[:priority]` entries.
    #[serde(default, deserialize_with = "de::list")]
    pub nodes: Vec<String>,
    /// \[node-affinity\] strict.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub strict: Option<bool>,
    /// \[resource-affinity\] `positive` or `negative`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    /// Whether the rule is disabled.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub disable: Option<bool>,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its place in `rules.cfg`.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub order: Option<u64>,
    /// The digest of `rules.cfg`.
    #[serde(default)]
    pub digest: String,
    /// Why the rule cannot be applied, by option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

/// The settings of `create_rule` and `update_rule`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HaRuleConfig {
    /// `type` (required to create).
    pub kind: Option<String>,
    /// `resources`.
    pub resources: Vec<String>,
    /// `nodes`.
    pub nodes: Vec<String>,
    /// `strict`.
    pub strict: Option<bool>,
    /// `affinity`.
    pub affinity: Option<String>,
    /// `disable`.
    pub disable: Option<bool>,
    /// `comment`.
    pub comment: Option<String>,
    /// \[update\] options to remove.
    pub delete: Vec<String>,
}

impl HaRuleConfig {
    /// A node affinity rule of `resources` on `nodes`.
    pub fn node_affinity(resources: &[&str], nodes: &[&str], strict: bool) -> Self {
        Self {
            kind: Some("node-affinity".into()),
            resources: resources.iter().map(|r| (*r).to_string()).collect(),
            nodes: nodes.iter().map(|n| (*n).to_string()).collect(),
            strict: Some(strict),
            ..Self::default()
        }
    }

    /// A resource affinity rule (`positive` or `negative`).
    pub fn resource_affinity(resources: &[&str], affinity: &str) -> Self {
        Self {
            kind: Some("resource-affinity".into()),
            resources: resources.iter().map(|r| (*r).to_string()).collect(),
            affinity: Some(affinity.into()),
            ..Self::default()
        }
    }

    /// Sets the comment.
    #[must_use]
    pub fn comment(mut self, comment: &str) -> Self {
        self.comment = Some(comment.into());
        self
    }

    fn params(&self) -> Params {
        let join = |v: &Vec<String>| (!v.is_empty()).then(|| v.join(","));
        Params::new()
            .opt("type", self.kind.as_deref())
            .opt("resources", join(&self.resources))
            .opt("nodes", join(&self.nodes))
            .opt("strict", self.strict)
            .opt("affinity", self.affinity.as_deref())
            .opt("disable", self.disable)
            .opt("comment", self.comment.as_deref())
            .opt("delete", join(&self.delete))
    }
}

/// One line of `GET /cluster/ha/status/current`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HaStatusLine {
    /// `quorum`, `master`, `lrm:<node>`, `service:<sid>`, `fencing`.
    pub id: String,
    /// `quorum`, `master`, `lrm`, `service`, `fencing`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The node.
    #[serde(default)]
    pub node: String,
    /// The status text.
    #[serde(default)]
    pub status: String,
    /// \[service\] the sid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// \[service\] the verbose state (`started`, `starting`, `queued`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[service\] the CRM's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crm_state: Option<String>,
    /// \[service\] the requested state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// \[quorum\] whether the node has quorum.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub quorate: Option<bool>,
    /// \[master, lrm\] when it last wrote its status.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub timestamp: Option<i64>,
    /// Anything else.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a `migrate` or `relocate` request answers (9.x; 8.x answers
/// nothing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HaMotion {
    /// The resource.
    #[serde(default)]
    pub sid: String,
    /// The node asked for.
    #[serde(rename = "requested-node", default)]
    pub requested_node: String,
    /// Resources that move along (positive affinity).
    #[serde(rename = "comigrated-resources", default)]
    pub comigrated_resources: Vec<String>,
    /// Resources in the way (negative affinity).
    #[serde(rename = "blocking-resources", default)]
    pub blocking_resources: Vec<Value>,
}

impl Ha<'_> {
    /// `GET /cluster/ha/resources` (`index`), of one type if given.
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self, kind: Option<&str>) -> Result<Vec<HaResource>> {
        let params = Params::new().opt("type", kind);
        self.client
            .call(Method::GET, "/cluster/ha/resources", &params)
            .await
    }

    /// `GET /cluster/ha/resources/{sid}` (`read`).
    ///
    /// # Errors
    /// `no such resource 'vm:100'`.
    pub async fn read(&self, sid: &str) -> Result<HaResource> {
        let path = format!("/cluster/ha/resources/{}", seg(sid));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/ha/resources` (`create`).
    ///
    /// # Errors
    /// `resource 'vm:100' does not exist in cluster`, `create resource
    /// failed: resource ID 'vm:100' already defined`.
    pub async fn create(&self, sid: &str, cfg: &HaResourceConfig) -> Result<()> {
        let params = cfg.params().set("sid", sid);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/ha/resources", &params)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/ha/resources/{sid}` (`update`).
    ///
    /// # Errors
    /// `update resources config failed: no such resource 'vm:100'`.
    pub async fn update(&self, sid: &str, cfg: &HaResourceConfig) -> Result<()> {
        let path = format!("/cluster/ha/resources/{}", seg(sid));
        let _: Value = self.client.call(Method::PUT, &path, &cfg.params()).await?;
        Ok(())
    }

    /// `DELETE /cluster/ha/resources/{sid}` (`delete`).
    ///
    /// # Errors
    /// `cannot delete service 'vm:100', not HA managed!`.
    pub async fn delete(&self, sid: &str) -> Result<()> {
        let path = format!("/cluster/ha/resources/{}", seg(sid));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    async fn motion(&self, sid: &str, node: &str, what: &str) -> Result<Option<HaMotion>> {
        let path = format!("/cluster/ha/resources/{}/{what}", seg(sid));
        let params = Params::new().set("node", node);
        let v: Value = self.client.call(Method::POST, &path, &params).await?;
        if v.is_null() {
            return Ok(None);
        }
        Ok(serde_json::from_value(v).ok())
    }

    /// `POST /cluster/ha/resources/{sid}/migrate` (`migrate`): queued for
    /// the CRM; 9.x answers what moves along.
    ///
    /// # Errors
    /// `resource 'vm:100' is not HA managed`.
    pub async fn migrate(&self, sid: &str, node: &str) -> Result<Option<HaMotion>> {
        self.motion(sid, node, "migrate").await
    }

    /// `POST /cluster/ha/resources/{sid}/relocate` (`relocate`).
    ///
    /// # Errors
    /// `resource 'vm:100' is not HA managed`.
    pub async fn relocate(&self, sid: &str, node: &str) -> Result<Option<HaMotion>> {
        self.motion(sid, node, "relocate").await
    }

    /// `GET /cluster/ha/groups` (groups' `index`).
    ///
    /// # Errors
    /// 9.x: `cannot index groups: ha groups have been migrated to rules`.
    pub async fn groups(&self) -> Result<Vec<HaGroup>> {
        self.client
            .call(Method::GET, "/cluster/ha/groups", &Params::new())
            .await
    }

    /// `GET /cluster/ha/groups/{group}` (groups' `read`).
    ///
    /// # Errors
    /// `no such ha group 'x'`.
    pub async fn read_group(&self, group: &str) -> Result<HaGroup> {
        let path = format!("/cluster/ha/groups/{}", seg(group));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/ha/groups` (groups' `create`).
    ///
    /// # Errors
    /// `create ha group failed: ha group ID 'x' already defined`.
    pub async fn create_group(&self, group: &str, cfg: &HaGroupConfig) -> Result<()> {
        let params = cfg.params().set("group", group);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/ha/groups", &params)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/ha/groups/{group}` (groups' `update`).
    ///
    /// # Errors
    /// `update ha group failed: no such ha group 'x'`.
    pub async fn update_group(&self, group: &str, cfg: &HaGroupConfig) -> Result<()> {
        let path = format!("/cluster/ha/groups/{}", seg(group));
        let _: Value = self.client.call(Method::PUT, &path, &cfg.params()).await?;
        Ok(())
    }

    /// `DELETE /cluster/ha/groups/{group}` (groups' `delete`).
    ///
    /// # Errors
    /// `delete ha group failed: ha group is used by service 'vm:100'`.
    pub async fn delete_group(&self, group: &str) -> Result<()> {
        let path = format!("/cluster/ha/groups/{}", seg(group));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /cluster/ha/rules` (rules' `index`), of one type or
    /// resource if given.
    ///
    /// # Errors
    /// As any call.
    pub async fn rules(&self, kind: Option<&str>, resource: Option<&str>) -> Result<Vec<HaRule>> {
        let params = Params::new().opt("type", kind).opt("resource", resource);
        self.client
            .call(Method::GET, "/cluster/ha/rules", &params)
            .await
    }

    /// `GET /cluster/ha/rules/{rule}` (`read_rule`).
    ///
    /// # Errors
    /// `no such ha rule 'x'`.
    pub async fn read_rule(&self, rule: &str) -> Result<HaRule> {
        let path = format!("/cluster/ha/rules/{}", seg(rule));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/ha/rules` (`create_rule`).
    ///
    /// # Errors
    /// `create ha rule failed: cannot use unmanaged resource(s) ...`, an
    /// infeasible rule.
    pub async fn create_rule(&self, rule: &str, cfg: &HaRuleConfig) -> Result<()> {
        let params = cfg.params().set("rule", rule);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/ha/rules", &params)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/ha/rules/{rule}` (`update_rule`).
    ///
    /// # Errors
    /// `update HA rules failed: HA rule 'x' does not exist`.
    pub async fn update_rule(&self, rule: &str, cfg: &HaRuleConfig) -> Result<()> {
        let path = format!("/cluster/ha/rules/{}", seg(rule));
        let _: Value = self.client.call(Method::PUT, &path, &cfg.params()).await?;
        Ok(())
    }

    /// `DELETE /cluster/ha/rules/{rule}` (`delete_rule`).
    ///
    /// # Errors
    /// As any call.
    pub async fn delete_rule(&self, rule: &str) -> Result<()> {
        let path = format!("/cluster/ha/rules/{}", seg(rule));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /cluster/ha/status/current` (`status`).
    ///
    /// # Errors
    /// As any call.
    pub async fn status(&self) -> Result<Vec<HaStatusLine>> {
        self.client
            .call(Method::GET, "/cluster/ha/status/current", &Params::new())
            .await
    }

    /// `GET /cluster/ha/status/manager_status` (`manager_status`): the
    /// CRM's status with each LRM's.
    ///
    /// # Errors
    /// As any call.
    pub async fn manager_status(&self) -> Result<Value> {
        self.client
            .call(
                Method::GET,
                "/cluster/ha/status/manager_status",
                &Params::new(),
            )
            .await
    }
}
