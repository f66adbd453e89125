//! The firewall: `/cluster/firewall`, `/nodes/{node}/firewall` and a
//! guest's `/nodes/{node}/{qemu,lxc}/{vmid}/firewall`: options, rules,
//! (also of an SDN VNet, `/cluster/sdn/vnets/{vnet}/firewall`),
//! security groups, aliases, IP sets, references and macros.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::firewall::{RuleSpec, Scope};
//!
//! let fw = client.firewall();
//! fw.create_security_group("web", Some("web servers")).await?;
//! fw.create_rule(&Scope::Group("web".into()), &RuleSpec::new("in", "ACCEPT").macro_("HTTPS"))
//!     .await?;
//! let vm = Scope::Qemu("pve".into(), 100);
//! fw.create_rule(&vm, &RuleSpec::new("group", "web").enable(true)).await?;
//! let rules = fw.get_rules(&vm).await?;
//! # let _ = rules;
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The firewall area; see [`Client::firewall`].
#[derive(Debug, Clone, Copy)]
pub struct Firewall<'a> {
    client: &'a Client,
}

impl Client {
    /// The firewall calls.
    pub fn firewall(&self) -> Firewall<'_> {
        Firewall { client: self }
    }
}

/// Which firewall configuration a call is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `cluster.fw`.
    Cluster,
    /// A node's `host.fw`.
    Node(String),
    /// A VM's `<vmid>.fw` (node, VMID).
    Qemu(String, u32),
    /// A container's `<vmid>.fw` (node, VMID).
    Lxc(String, u32),
    /// A security group (rules only).
    Group(String),
    /// An SDN VNet's `<vnet>.fw` (options and `forward`/`group` rules
    /// only; the VNet must be applied).
    Vnet(String),
}

impl Scope {
    fn base(&self) -> String {
        match self {
            Self::Cluster => "/cluster/firewall".into(),
            Self::Node(n) => format!("/nodes/{}/firewall", seg(n)),
            Self::Qemu(n, v) => format!("/nodes/{}/qemu/{v}/firewall", seg(n)),
            Self::Lxc(n, v) => format!("/nodes/{}/lxc/{v}/firewall", seg(n)),
            Self::Group(g) => format!("/cluster/firewall/groups/{}", seg(g)),
            Self::Vnet(v) => format!("/cluster/sdn/vnets/{}/firewall", seg(v)),
        }
    }

    fn rules(&self) -> String {
        match self {
            Self::Group(_) => self.base(),
            _ => format!("{}/rules", self.base()),
        }
    }
}

/// A rule as `get_rules` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FwRule {
    /// Its position.
    #[serde(default, deserialize_with = "de::u64_lenient")]
    pub pos: u64,
    /// `in`, `out`, `forward` or `group`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `ACCEPT`, `DROP`, `REJECT` or a security group.
    pub action: String,
    /// 1 when enabled.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub enable: Option<u64>,
    /// The list's digest.
    #[serde(default)]
    pub digest: String,
    /// The IP version its addresses imply.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub ipversion: Option<u64>,
    /// What is wrong with it (an alias gone, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Map<String, Value>>,
    /// `macro`, `proto`, `dport`, `source`, `comment`, ...
    #[serde(flatten)]
    pub props: BTreeMap<String, Value>,
}

impl FwRule {
    /// A property as text (`dport`, `macro`, `comment`).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.props.get(key).and_then(Value::as_str)
    }
}

/// The properties of a rule to create or change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSpec {
    props: BTreeMap<String, String>,
}

impl RuleSpec {
    /// A rule of `kind` (`in`, `out`, `forward`, `group`) and `action`
    /// (a verdict, or the group's name).
    pub fn new(kind: &str, action: &str) -> Self {
        Self::default().set("type", kind).set("action", action)
    }

    /// Any property by PVE's name; an empty value removes it.
    #[must_use]
    pub fn set(mut self, key: &str, value: &str) -> Self {
        self.props.insert(key.into(), value.into());
        self
    }

    /// `macro`.
    #[must_use]
    pub fn macro_(self, m: &str) -> Self {
        self.set("macro", m)
    }

    /// `proto`.
    #[must_use]
    pub fn proto(self, p: &str) -> Self {
        self.set("proto", p)
    }

    /// `dport`.
    #[must_use]
    pub fn dport(self, p: &str) -> Self {
        self.set("dport", p)
    }

    /// `source`.
    #[must_use]
    pub fn source(self, s: &str) -> Self {
        self.set("source", s)
    }

    /// `dest`.
    #[must_use]
    pub fn dest(self, d: &str) -> Self {
        self.set("dest", d)
    }

    /// `iface`.
    #[must_use]
    pub fn iface(self, i: &str) -> Self {
        self.set("iface", i)
    }

    /// `comment`.
    #[must_use]
    pub fn comment(self, c: &str) -> Self {
        self.set("comment", c)
    }

    /// `enable`.
    #[must_use]
    pub fn enable(self, on: bool) -> Self {
        self.set("enable", if on { "1" } else { "0" })
    }

    fn params(&self) -> Params {
        let mut p = Params::new();
        for (k, v) in &self.props {
            p.push(k.clone(), v.as_str());
        }
        p
    }
}

/// An item of a list with its digest (groups, aliases, IP sets, IP set
/// entries, references).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FwItem {
    /// `group`, `name`, `cidr`, `ref`, ... by the list's names.
    #[serde(flatten)]
    pub fields: BTreeMap<String, Value>,
}

impl FwItem {
    /// A field as text.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// A macro.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FwMacro {
    /// Its name (`SSH`).
    #[serde(rename = "macro")]
    pub name: String,
    /// What it is for.
    pub descr: String,
}

impl Firewall<'_> {
    async fn unit(&self, method: Method, path: &str, params: &Params) -> Result<()> {
        let _: Value = self.client.call(method, path, params).await?;
        Ok(())
    }

    /// `GET .../firewall/options` (`get_options`): the options set, and
    /// `digest`.
    ///
    /// # Errors
    /// As any call.
    pub async fn get_options(&self, scope: &Scope) -> Result<Map<String, Value>> {
        let path = format!("{}/options", scope.base());
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT .../firewall/options` (`set_options`): `(name, value)` pairs,
    /// options to `delete`, and the `digest` read.
    ///
    /// # Errors
    /// `detected modified configuration ...`, `no such option 'x'`.
    pub async fn set_options(
        &self,
        scope: &Scope,
        set: &[(&str, &str)],
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let mut p = Params::new();
        for (k, v) in set {
            p.push(*k, *v);
        }
        let p = p
            .opt("delete", (!delete.is_empty()).then(|| delete.join(",")))
            .opt("digest", digest);
        self.unit(Method::PUT, &format!("{}/options", scope.base()), &p)
            .await
    }

    /// `GET .../rules` (`get_rules`).
    ///
    /// # Errors
    /// `no such security group 'x'`.
    pub async fn get_rules(&self, scope: &Scope) -> Result<Vec<FwRule>> {
        self.client
            .call(Method::GET, &scope.rules(), &Params::new())
            .await
    }

    /// `GET .../rules/{pos}` (`get_rule`).
    ///
    /// # Errors
    /// `no rule at position N`.
    pub async fn get_rule(&self, scope: &Scope, pos: u64) -> Result<FwRule> {
        let path = format!("{}/{pos}", scope.rules());
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST .../rules` (`create_rule`): the new rule goes on top.
    ///
    /// # Errors
    /// PVE's rule checks (`unknown macro 'x'`, `no such alias 'x'`, ...).
    pub async fn create_rule(&self, scope: &Scope, rule: &RuleSpec) -> Result<()> {
        self.unit(Method::POST, &scope.rules(), &rule.params())
            .await
    }

    /// `PUT .../rules/{pos}` (`update_rule`): changes the rule, deleting
    /// the properties named in `delete`.
    ///
    /// # Errors
    /// PVE's rule checks, `no rule at position N`, a stale digest.
    pub async fn update_rule(
        &self,
        scope: &Scope,
        pos: u64,
        rule: &RuleSpec,
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let p = rule
            .params()
            .opt("delete", (!delete.is_empty()).then(|| delete.join(",")))
            .opt("digest", digest);
        self.unit(Method::PUT, &format!("{}/{pos}", scope.rules()), &p)
            .await
    }

    /// `PUT .../rules/{pos}` with `moveto` (`update_rule`): moves the
    /// rule before the one at `moveto`.
    ///
    /// # Errors
    /// `no rule at position N`.
    pub async fn move_rule(&self, scope: &Scope, pos: u64, moveto: u64) -> Result<()> {
        let p = Params::new().set("moveto", moveto);
        self.unit(Method::PUT, &format!("{}/{pos}", scope.rules()), &p)
            .await
    }

    /// `DELETE .../rules/{pos}` (`delete_rule`).
    ///
    /// # Errors
    /// `no rule at position N`, a stale digest.
    pub async fn delete_rule(&self, scope: &Scope, pos: u64, digest: Option<&str>) -> Result<()> {
        let p = Params::new().opt("digest", digest);
        self.unit(Method::DELETE, &format!("{}/{pos}", scope.rules()), &p)
            .await
    }

    /// `GET /cluster/firewall/groups` (`list_security_groups`).
    ///
    /// # Errors
    /// As any call.
    pub async fn list_security_groups(&self) -> Result<Vec<FwItem>> {
        self.client
            .call(Method::GET, "/cluster/firewall/groups", &Params::new())
            .await
    }

    /// `POST /cluster/firewall/groups` (`create_security_group`).
    ///
    /// # Errors
    /// `Security group 'x' already exists`.
    pub async fn create_security_group(&self, group: &str, comment: Option<&str>) -> Result<()> {
        let p = Params::new().set("group", group).opt("comment", comment);
        self.unit(Method::POST, "/cluster/firewall/groups", &p)
            .await
    }

    /// `POST /cluster/firewall/groups` with `rename`
    /// (`create_security_group`): the group `old` becomes `group`.
    ///
    /// # Errors
    /// `Security group 'x' does not exist`, `... does already exist`.
    pub async fn rename_security_group(&self, old: &str, group: &str) -> Result<()> {
        let p = Params::new().set("group", group).set("rename", old);
        self.unit(Method::POST, "/cluster/firewall/groups", &p)
            .await
    }

    /// `DELETE /cluster/firewall/groups/{group}`
    /// (`delete_security_group`): only an empty group.
    ///
    /// # Errors
    /// `Security group 'x' is not empty`.
    pub async fn delete_security_group(&self, group: &str) -> Result<()> {
        let path = format!("/cluster/firewall/groups/{}", seg(group));
        self.unit(Method::DELETE, &path, &Params::new()).await
    }

    /// `GET .../aliases` (`get_aliases`).
    ///
    /// # Errors
    /// As any call.
    pub async fn get_aliases(&self, scope: &Scope) -> Result<Vec<FwItem>> {
        let path = format!("{}/aliases", scope.base());
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST .../aliases` (`create_alias`).
    ///
    /// # Errors
    /// `alias 'x' already exists`.
    pub async fn create_alias(
        &self,
        scope: &Scope,
        name: &str,
        cidr: &str,
        comment: Option<&str>,
    ) -> Result<()> {
        let p = Params::new()
            .set("name", name)
            .set("cidr", cidr)
            .opt("comment", comment);
        self.unit(Method::POST, &format!("{}/aliases", scope.base()), &p)
            .await
    }

    /// `GET .../aliases/{name}` (`read_alias`).
    ///
    /// # Errors
    /// `no such alias`.
    pub async fn read_alias(&self, scope: &Scope, name: &str) -> Result<FwItem> {
        let path = format!("{}/aliases/{}", scope.base(), seg(name));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT .../aliases/{name}` (`update_alias`).
    ///
    /// # Errors
    /// `no such alias`, `alias 'x' already exists`.
    pub async fn update_alias(
        &self,
        scope: &Scope,
        name: &str,
        cidr: &str,
        comment: Option<&str>,
        rename: Option<&str>,
    ) -> Result<()> {
        let p = Params::new()
            .set("cidr", cidr)
            .opt("comment", comment)
            .opt("rename", rename);
        let path = format!("{}/aliases/{}", scope.base(), seg(name));
        self.unit(Method::PUT, &path, &p).await
    }

    /// `DELETE .../aliases/{name}` (`remove_alias`).
    ///
    /// # Errors
    /// A stale digest.
    pub async fn remove_alias(&self, scope: &Scope, name: &str) -> Result<()> {
        let path = format!("{}/aliases/{}", scope.base(), seg(name));
        self.unit(Method::DELETE, &path, &Params::new()).await
    }

    /// `GET .../ipset` (`ipset_index`).
    ///
    /// # Errors
    /// As any call.
    pub async fn ipset_index(&self, scope: &Scope) -> Result<Vec<FwItem>> {
        let path = format!("{}/ipset", scope.base());
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST .../ipset` (`create_ipset`).
    ///
    /// # Errors
    /// `IPSet 'x' already exists`.
    pub async fn create_ipset(
        &self,
        scope: &Scope,
        name: &str,
        comment: Option<&str>,
    ) -> Result<()> {
        let p = Params::new().set("name", name).opt("comment", comment);
        self.unit(Method::POST, &format!("{}/ipset", scope.base()), &p)
            .await
    }

    /// `GET .../ipset/{name}` (`get_ipset`): the entries.
    ///
    /// # Errors
    /// `no such IPSet 'x'`.
    pub async fn get_ipset(&self, scope: &Scope, name: &str) -> Result<Vec<FwItem>> {
        let path = format!("{}/ipset/{}", scope.base(), seg(name));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `DELETE .../ipset/{name}` (`delete_ipset`): only an empty set
    /// unless `force`.
    ///
    /// # Errors
    /// `IPSet 'x' is not empty`.
    pub async fn delete_ipset(&self, scope: &Scope, name: &str, force: bool) -> Result<()> {
        let p = Params::new().opt("force", force.then_some(true));
        let path = format!("{}/ipset/{}", scope.base(), seg(name));
        self.unit(Method::DELETE, &path, &p).await
    }

    /// `POST .../ipset/{name}` (`create_ip`).
    ///
    /// # Errors
    /// `address 'x' already exists`, `no such alias 'x'`.
    pub async fn create_ip(
        &self,
        scope: &Scope,
        name: &str,
        cidr: &str,
        nomatch: bool,
        comment: Option<&str>,
    ) -> Result<()> {
        let p = Params::new()
            .set("cidr", cidr)
            .opt("nomatch", nomatch.then_some(true))
            .opt("comment", comment);
        let path = format!("{}/ipset/{}", scope.base(), seg(name));
        self.unit(Method::POST, &path, &p).await
    }

    /// `GET .../ipset/{name}/{cidr}` (`read_ip`).
    ///
    /// # Errors
    /// `no such IP/Network`.
    pub async fn read_ip(&self, scope: &Scope, name: &str, cidr: &str) -> Result<FwItem> {
        let path = format!("{}/ipset/{}/{}", scope.base(), seg(name), seg(cidr));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT .../ipset/{name}/{cidr}` (`update_ip`): `nomatch` and
    /// `comment` as given.
    ///
    /// # Errors
    /// `no such IP/Network`.
    pub async fn update_ip(
        &self,
        scope: &Scope,
        name: &str,
        cidr: &str,
        nomatch: bool,
        comment: Option<&str>,
    ) -> Result<()> {
        let p = Params::new()
            .opt("nomatch", nomatch.then_some(true))
            .opt("comment", comment);
        let path = format!("{}/ipset/{}/{}", scope.base(), seg(name), seg(cidr));
        self.unit(Method::PUT, &path, &p).await
    }

    /// `DELETE .../ipset/{name}/{cidr}` (`remove_ip`).
    ///
    /// # Errors
    /// `no such IPSet 'x'`.
    pub async fn remove_ip(&self, scope: &Scope, name: &str, cidr: &str) -> Result<()> {
        let path = format!("{}/ipset/{}/{}", scope.base(), seg(name), seg(cidr));
        self.unit(Method::DELETE, &path, &Params::new()).await
    }

    /// `GET .../refs` (`refs`): the aliases and IP sets a rule may use,
    /// of one `kind` (`alias`, `ipset`) if given.
    ///
    /// # Errors
    /// As any call.
    pub async fn refs(&self, scope: &Scope, kind: Option<&str>) -> Result<Vec<FwItem>> {
        let path = format!("{}/refs", scope.base());
        let p = Params::new().opt("type", kind);
        self.client.call(Method::GET, &path, &p).await
    }

    /// `GET /cluster/firewall/macros` (`get_macros`).
    ///
    /// # Errors
    /// As any call.
    pub async fn get_macros(&self) -> Result<Vec<FwMacro>> {
        self.client
            .call(Method::GET, "/cluster/firewall/macros", &Params::new())
            .await
    }

    /// `GET .../firewall/log` (`log`) of a node or guest: `(n, t)` lines.
    ///
    /// # Errors
    /// As any call.
    pub async fn log(&self, scope: &Scope, limit: Option<u64>) -> Result<Vec<(u64, String)>> {
        #[derive(Deserialize)]
        struct Line {
            n: u64,
            t: String,
        }
        let path = format!("{}/log", scope.base());
        let p = Params::new().opt("limit", limit);
        let lines: Vec<Line> = self.client.call(Method::GET, &path, &p).await?;
        Ok(lines.into_iter().map(|l| (l.n, l.t)).collect())
    }
}
