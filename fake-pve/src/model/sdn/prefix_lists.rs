//! The SDN prefix lists of PVE 9.2 (`sdn/prefix-lists.cfg`), as
//! pve-network's `API2/Network/SDN/PrefixLists*.pm` hand them to the Rust
//! crate proxmox-ve-config (`sdn/prefix_list.rs`): FRR IP prefix lists,
//! each an ordered list of entries (`permit` or `deny` a prefix, with
//! optional `ge`/`le` bounds on the prefix length, and a sequence number).
//!
//! A sequence number left out is the highest one plus 5 (5 for the
//! first), as FRR numbers them; two entries never share one; `ge` and
//! `le` lie between the prefix's length and the family's maximum, `ge`
//! not above `le`. Changes are pending until `PUT /cluster/sdn`, as for
//! zones and VNets. A list a fabric's `route_filter` or a route map's
//! match names cannot be deleted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::fabrics::{Params, check_digest, list, opt};
use super::net::Cidr;
use super::{Entry, Listing, Obj, Sdn, Section, View, pending_config, wrapped};
use crate::model::{Error, Result};

/// One entry of a prefix list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixEntry {
    action: String,
    prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    le: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ge: Option<u32>,
    seq: u32,
}

impl PrefixEntry {
    /// The entry as the API answers it (`action`, `prefix`, `le`, `ge`,
    /// `seq`).
    fn record(&self) -> Obj {
        let mut m = Obj::new();
        m.insert("action".into(), json!(self.action));
        m.insert("prefix".into(), json!(self.prefix));
        if let Some(le) = self.le {
            m.insert("le".into(), json!(le));
        }
        if let Some(ge) = self.ge {
            m.insert("ge".into(), json!(ge));
        }
        m.insert("seq".into(), json!(self.seq));
        m
    }

    /// The entry as a property string, in the crate's field order.
    fn property_string(&self) -> String {
        let mut s = format!("action={},prefix={}", self.action, self.prefix);
        if let Some(le) = self.le {
            s.push_str(&format!(",le={le}"));
        }
        if let Some(ge) = self.ge {
            s.push_str(&format!(",ge={ge}"));
        }
        s.push_str(&format!(",seq={}", self.seq));
        s
    }

    /// `PrefixListEntry::validate`: prefix length <= ge <= le <= the
    /// family's maximum.
    fn validate(&self) -> Result<()> {
        let c = Cidr::parse(&self.prefix)
            .ok_or_else(|| Error::failed(format!("invalid CIDR '{}'", self.prefix)))?;
        let max = if c.is_v4() { 32 } else { 128 };
        let mask = u32::from(c.prefix);
        if let Some(le) = self.le {
            if le > max {
                return Err(Error::failed(format!(
                    "Prefix <= must not be greater than {max}"
                )));
            }
            if mask > le {
                return Err(Error::failed(format!(
                    "Prefix <= must not be less than {mask}"
                )));
            }
            if let Some(ge) = self.ge.filter(|ge| *ge > le) {
                return Err(Error::failed(format!(
                    "Prefix >= ({ge}) must not be greater than Prefix <= ({le})"
                )));
            }
        }
        if let Some(ge) = self.ge {
            if ge > max {
                return Err(Error::failed(format!(
                    "Prefix >= must not be greater than {max}"
                )));
            }
            if mask > ge {
                return Err(Error::failed(format!(
                    "Prefix >= must not be less than {mask}"
                )));
            }
        }
        Ok(())
    }
}

/// What a call gives for an entry: every member optional (the crate's
/// API type and its updater).
#[derive(Debug, Clone, Default)]
struct EntryInput {
    action: Option<String>,
    prefix: Option<String>,
    le: Option<u32>,
    ge: Option<u32>,
    seq: Option<u32>,
}

fn number(k: &str, v: &str) -> Result<u32> {
    v.parse()
        .map_err(|_| Error::invalid(k, format!("type check ('integer') failed - got '{v}'")))
}

impl EntryInput {
    /// The members of a call's parameters.
    fn of_params(p: &Params) -> Result<Self> {
        let n = |k: &str| opt(p, k).map(|v| number(k, &v)).transpose();
        Ok(Self {
            action: opt(p, "action"),
            prefix: opt(p, "prefix"),
            le: n("le")?,
            ge: n("ge")?,
            seq: n("seq")?,
        })
    }

    /// An `entries` property string (checked by the schema already).
    fn of_property_string(s: &str) -> Result<Self> {
        let mut e = Self::default();
        for part in s.split(',').filter(|x| !x.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or(("", part));
            match k {
                "action" => e.action = Some(v.to_string()),
                "prefix" => e.prefix = Some(v.to_string()),
                "le" => e.le = Some(number("entries", v)?),
                "ge" => e.ge = Some(number("entries", v)?),
                "seq" => e.seq = Some(number("entries", v)?),
                _ => {
                    return Err(Error::invalid(
                        "entries",
                        format!("invalid format - unexpected property '{k}'"),
                    ));
                }
            }
        }
        Ok(e)
    }

    /// A whole entry: `action` and `prefix` are required.
    fn complete(self, seq: u32) -> Result<PrefixEntry> {
        let missing = |k: &str| Error::failed(format!("missing field `{k}`"));
        Ok(PrefixEntry {
            action: self.action.ok_or_else(|| missing("action"))?,
            prefix: self.prefix.ok_or_else(|| missing("prefix"))?,
            le: self.le,
            ge: self.ge,
            seq,
        })
    }
}

/// `sdn/prefix-lists.cfg`: the prefix lists by ID, each its entries in
/// the order they were written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrefixLists {
    lists: BTreeMap<String, Vec<PrefixEntry>>,
}

/// `next_seq_number`: the highest sequence number plus 5, or 5.
fn next_seq(entries: &[PrefixEntry]) -> u32 {
    entries
        .iter()
        .map(|e| e.seq)
        .max()
        .map_or(5, |s| s.saturating_add(5))
}

/// `try_insert_api_entry`: a given sequence number must be free; a
/// missing one is the next; the entry must be valid.
fn insert(entries: &mut Vec<PrefixEntry>, e: EntryInput) -> Result<()> {
    if let Some(seq) = e.seq
        && entries.iter().any(|x| x.seq == seq)
    {
        return Err(Error::failed(format!(
            "entry with sequence number {seq} already exists!"
        )));
    }
    let seq = e.seq.unwrap_or_else(|| next_seq(entries));
    let entry = e.complete(seq)?;
    entry.validate()?;
    entries.push(entry);
    Ok(())
}

/// `try_set_api_entries`: the entries of `entries` parameters, in order.
fn entries_of(values: &[String]) -> Result<Vec<PrefixEntry>> {
    let mut out = Vec::new();
    for v in values {
        insert(&mut out, EntryInput::of_property_string(v)?)?;
    }
    Ok(out)
}

impl PrefixLists {
    /// Whether no prefix list is configured.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// The file as the section config writes it.
    fn render(&self) -> String {
        let mut out = String::new();
        for (id, entries) in &self.lists {
            out.push_str(&format!("prefix-list: {id}\n"));
            for e in entries {
                out.push_str(&format!("\tentries {}\n", e.property_string()));
            }
            out.push('\n');
        }
        out
    }

    /// `digest`: the SHA-256 of the file's text.
    pub fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.render().as_bytes()))
    }

    /// `list`: each list as its section (`type`, `id`, `entries` as
    /// property strings when there are any).
    fn sections(&self) -> Section {
        self.lists
            .iter()
            .map(|(id, entries)| (id.clone(), section(id, entries)))
            .collect()
    }
}

fn section(id: &str, entries: &[PrefixEntry]) -> Obj {
    let mut o = Obj::new();
    o.insert("type".into(), json!("prefix-list"));
    o.insert("id".into(), json!(id));
    if !entries.is_empty() {
        let e: Vec<Value> = entries.iter().map(|e| json!(e.property_string())).collect();
        o.insert("entries".into(), Value::Array(e));
    }
    o
}

fn no_list(id: &str) -> Error {
    Error::failed(format!("could not find prefix list with id {id}"))
}

impl Sdn {
    fn running_prefix_lists(&self) -> PrefixLists {
        self.running
            .as_ref()
            .map(|r| r.prefix_lists.clone())
            .unwrap_or_default()
    }

    /// `GET /cluster/sdn/prefix-lists`: the lists by ID in a view; the
    /// digest of the file but for the running view.
    pub fn prefix_lists_index(&self, view: View) -> Listing {
        let of = |s: Section| s.into_iter().map(|(id, o)| (id, Entry::of(o))).collect();
        match view {
            View::Current => Listing {
                items: of(self.prefix_lists.sections()),
                digest: Some(self.prefix_lists.digest()),
            },
            View::Running => Listing {
                items: of(self.running_prefix_lists().sections()),
                digest: None,
            },
            View::Pending => Listing {
                items: pending_config(
                    &self.running_prefix_lists().sections(),
                    &self.prefix_lists.sections(),
                ),
                digest: Some(self.prefix_lists.digest()),
            },
        }
    }

    /// `GET /cluster/sdn/prefix-lists/{id}`: the list's section.
    ///
    /// # Errors
    /// `id: <id> doesn't exist` (a parameter error).
    pub fn get_prefix_list(&self, id: &str) -> Result<Obj> {
        self.prefix_lists
            .lists
            .get(id)
            .map(|e| section(id, e))
            .ok_or_else(|| Error::invalid("id", format!("{id} doesn't exist")))
    }

    /// `GET /cluster/sdn/prefix-lists/{id}/entries`: the entries in order.
    ///
    /// # Errors
    /// `could not find prefix list with id: <id>`.
    pub fn prefix_list_entries(&self, id: &str) -> Result<Vec<Obj>> {
        let entries =
            self.prefix_lists.lists.get(id).ok_or_else(|| {
                Error::failed(format!("could not find prefix list with id: {id}"))
            })?;
        Ok(entries.iter().map(PrefixEntry::record).collect())
    }

    /// `GET /cluster/sdn/prefix-lists/{id}/entries/{url_seq}`.
    ///
    /// # Errors
    /// `id: entry <seq> in prefix list <id> doesn't exist`.
    pub fn prefix_list_entry(&self, id: &str, seq: &str) -> Result<Obj> {
        let n: Option<u32> = seq.parse().ok();
        self.prefix_lists
            .lists
            .get(id)
            .and_then(|l| l.iter().find(|e| Some(e.seq) == n))
            .map(PrefixEntry::record)
            .ok_or_else(|| {
                Error::invalid(
                    "id",
                    format!("entry {seq} in prefix list {id} doesn't exist"),
                )
            })
    }

    /// Runs a change of `prefix-lists.cfg` as PVE does: under the global
    /// lock's token, the digest checked, refusals after `errmsg`.
    fn prefix_lists_write(
        &mut self,
        errmsg: &str,
        p: &Params,
        change: impl FnOnce(&Self, &mut PrefixLists) -> Result<()>,
    ) -> Result<()> {
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(opt(p, "lock-token").as_deref())?;
            check_digest(&me.prefix_lists.digest(), p)?;
            let mut next = me.prefix_lists.clone();
            change(me, &mut next)?;
            me.prefix_lists = next;
            Ok(())
        };
        run(self).map_err(|e| wrapped(errmsg, e))
    }

    /// `POST /cluster/sdn/prefix-lists`.
    ///
    /// # Errors
    /// `creating prefix list failed: ...`: an existing list, entries that
    /// share a sequence number or are invalid.
    pub fn create_prefix_list(&mut self, p: &Params) -> Result<()> {
        self.prefix_lists_write("creating prefix list failed", p, |_, c| {
            let id = opt(p, "id").unwrap_or_default();
            if c.lists.contains_key(&id) {
                return Err(Error::failed(format!(
                    "prefix list already exists in configuration: {id}"
                )));
            }
            let entries = entries_of(&list(p, "entries"))?;
            c.lists.insert(id, entries);
            Ok(())
        })
    }

    /// `PUT /cluster/sdn/prefix-lists/{id}`: `entries` replace the list's
    /// entries, `delete=entries` empties it.
    ///
    /// # Errors
    /// `updating prefix list failed: ...`.
    pub fn update_prefix_list(&mut self, p: &Params) -> Result<()> {
        self.prefix_lists_write("updating prefix list failed", p, |_, c| {
            let id = opt(p, "id").unwrap_or_default();
            let entries = c.lists.get_mut(&id).ok_or_else(|| {
                Error::failed(format!("Could not find prefix list with id: {id}"))
            })?;
            if p.contains_key("entries") {
                *entries = entries_of(&list(p, "entries"))?;
            }
            if list(p, "delete").iter().any(|d| d == "entries") {
                entries.clear();
            }
            Ok(())
        })
    }

    /// `check_references`: the fabric whose `route_filter` or the route
    /// map entry whose match names the list.
    fn prefix_list_users(&self, id: &str) -> Result<()> {
        if let Some(f) = self.fabrics.route_filter_user(id) {
            return Err(Error::failed(format!(
                "prefix list {id} is still referenced by fabric {f}"
            )));
        }
        if let Some((rm, order)) = self.route_maps.prefix_list_user(id) {
            return Err(Error::failed(format!(
                "prefix list {id} is still referenced by route map entry {rm} #{order}"
            )));
        }
        Ok(())
    }

    /// `DELETE /cluster/sdn/prefix-lists/{id}`.
    ///
    /// # Errors
    /// `deleting prefix list failed: ...`: a list still in use, an
    /// unknown list.
    pub fn delete_prefix_list(&mut self, p: &Params) -> Result<()> {
        self.prefix_lists_write("deleting prefix list failed", p, |me, c| {
            let id = opt(p, "id").unwrap_or_default();
            me.prefix_list_users(&id)?;
            c.lists
                .remove(&id)
                .map(|_| ())
                .ok_or_else(|| Error::failed(format!("could not find prefix list with id: {id}")))
        })
    }

    /// `POST /cluster/sdn/prefix-lists/{id}/entries`.
    ///
    /// # Errors
    /// `creating prefix list entry failed: ...`.
    pub fn create_prefix_list_entry(&mut self, p: &Params) -> Result<()> {
        self.prefix_lists_write("creating prefix list entry failed", p, |_, c| {
            let id = opt(p, "id").unwrap_or_default();
            let entries = c.lists.get_mut(&id).ok_or_else(|| no_list(&id))?;
            insert(entries, EntryInput::of_params(p)?)
        })
    }

    /// `PUT /cluster/sdn/prefix-lists/{id}/entries/{url_seq}`
    /// (`try_update_entry`): the entry moves to the end of the list.
    ///
    /// # Errors
    /// `updating prefix list entry failed: ...`.
    pub fn update_prefix_list_entry(&mut self, p: &Params) -> Result<()> {
        self.prefix_lists_write("updating prefix list entry failed", p, |_, c| {
            let id = opt(p, "id").unwrap_or_default();
            let old: u32 = number("url_seq", &opt(p, "url_seq").unwrap_or_default())?;
            let entries = c.lists.get_mut(&id).ok_or_else(|| no_list(&id))?;
            let given = EntryInput::of_params(p)?;
            if let Some(seq) = given.seq
                && seq != old
                && entries.iter().any(|e| e.seq == seq)
            {
                return Err(Error::failed(format!(
                    "entry with sequence number {seq} already exists!"
                )));
            }
            let pos = entries.iter().position(|e| e.seq == old).ok_or_else(|| {
                Error::failed(format!("entry with sequence number {old} does not exist!"))
            })?;
            let mut e = entries.remove(pos);
            if let Some(v) = given.seq {
                e.seq = v;
            }
            if let Some(v) = given.action {
                e.action = v;
            }
            if let Some(v) = given.prefix {
                e.prefix = v;
            }
            if given.le.is_some() {
                e.le = given.le;
            }
            if given.ge.is_some() {
                e.ge = given.ge;
            }
            for d in list(p, "delete") {
                match d.as_str() {
                    "le" => e.le = None,
                    "ge" => e.ge = None,
                    "seq" => e.seq = next_seq(entries),
                    _ => {}
                }
            }
            if entries.iter().any(|x| x.seq == e.seq) {
                return Err(Error::failed(format!(
                    "entry with sequence number {} already exists",
                    e.seq
                )));
            }
            e.validate()?;
            entries.push(e);
            Ok(())
        })
    }

    /// `DELETE /cluster/sdn/prefix-lists/{id}/entries/{url_seq}`.
    ///
    /// # Errors
    /// `deleting prefix list entry failed: could not find prefix list
    /// entry with seq <seq>`.
    pub fn delete_prefix_list_entry(&mut self, p: &Params) -> Result<()> {
        self.prefix_lists_write("deleting prefix list entry failed", p, |_, c| {
            let id = opt(p, "id").unwrap_or_default();
            let seq = opt(p, "url_seq").unwrap_or_default();
            let n: Option<u32> = seq.parse().ok();
            let gone = || Error::failed(format!("could not find prefix list entry with seq {seq}"));
            let entries = c.lists.get_mut(&id).ok_or_else(gone)?;
            let pos = entries
                .iter()
                .position(|e| Some(e.seq) == n)
                .ok_or_else(gone)?;
            entries.remove(pos);
            Ok(())
        })
    }
}

/// The text of a parameter value (for the tests' tables).
#[cfg(test)]
fn params(pairs: &[(&str, &str)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::super::text;
    use super::*;

    fn with_list(entries: &[&str]) -> Sdn {
        let mut s = Sdn::default();
        let mut p = params(&[("id", "pl1")]);
        p.insert(
            "entries".into(),
            Value::Array(entries.iter().map(|e| json!(e)).collect()),
        );
        s.create_prefix_list(&p).expect("created");
        s
    }

    fn seqs(s: &Sdn) -> Vec<String> {
        s.prefix_list_entries("pl1")
            .expect("listed")
            .iter()
            .map(|e| text(&e["seq"]))
            .collect()
    }

    #[rstest]
    #[case::first_is_five(&["action=permit,prefix=192.0.2.0/24"], &["5"])]
    #[case::plus_five(&["action=permit,prefix=192.0.2.0/24,seq=100", "action=deny,prefix=10.0.0.0/8"], &["100", "105"])]
    #[case::kept_order(&["action=permit,prefix=192.0.2.0/24,seq=20", "action=deny,prefix=10.0.0.0/8,seq=10"], &["20", "10"])]
    fn sequence_numbers_follow_frr(#[case] entries: &[&str], #[case] want: &[&str]) {
        assert_eq!(seqs(&with_list(entries)), want);
    }

    #[rstest]
    #[case::le_below_mask(
        "action=permit,prefix=192.0.2.0/24,le=23",
        "Prefix <= must not be less than 24"
    )]
    #[case::ge_below_mask(
        "action=permit,prefix=192.0.2.0/24,ge=23",
        "Prefix >= must not be less than 24"
    )]
    #[case::ge_above_le(
        "action=permit,prefix=192.0.2.0/24,le=25,ge=27",
        "Prefix >= (27) must not be greater than Prefix <= (25)"
    )]
    #[case::le_above_v4(
        "action=permit,prefix=192.0.2.0/24,le=33",
        "Prefix <= must not be greater than 32"
    )]
    #[case::ge_above_v4(
        "action=permit,prefix=192.0.2.0/24,ge=40",
        "Prefix >= must not be greater than 32"
    )]
    #[case::twice(
        "action=permit,prefix=192.0.2.0/24,seq=5\0action=deny,prefix=192.0.2.0/24,seq=5",
        "entry with sequence number 5 already exists!"
    )]
    #[case::no_action("prefix=192.0.2.0/24", "missing field `action`")]
    fn bad_entries_are_refused(#[case] entries: &str, #[case] msg: &str) {
        let mut s = Sdn::default();
        let mut p = params(&[("id", "pl1")]);
        p.insert(
            "entries".into(),
            Value::Array(entries.split('\0').map(|e| json!(e)).collect()),
        );
        let e = s.create_prefix_list(&p).expect_err("refused").to_string();
        assert!(
            e.contains(&format!("creating prefix list failed: {msg}")),
            "{e}"
        );
        assert!(s.prefix_lists.is_empty());
    }

    #[test]
    fn an_ipv6_prefix_allows_lengths_up_to_128() {
        let s = with_list(&["action=permit,prefix=fd00::/64,ge=64,le=128"]);
        let e = s.prefix_list_entry("pl1", "5").expect("there");
        assert_eq!(
            (text(&e["ge"]), text(&e["le"])),
            ("64".into(), "128".into())
        );
    }

    #[test]
    fn an_entry_update_moves_checks_and_rolls_back() {
        let mut s = with_list(&[
            "action=permit,prefix=192.0.2.0/24,seq=100",
            "action=permit,prefix=192.0.2.0/24,seq=200",
        ]);
        let taken = params(&[("id", "pl1"), ("url_seq", "100"), ("seq", "200")]);
        let e = s.update_prefix_list_entry(&taken).expect_err("taken");
        assert!(
            e.to_string()
                .contains("entry with sequence number 200 already exists!")
        );
        let bad = params(&[("id", "pl1"), ("url_seq", "100"), ("le", "23")]);
        s.update_prefix_list_entry(&bad).expect_err("le too small");
        assert_eq!(seqs(&s), ["100", "200"]);
        let moved = params(&[("id", "pl1"), ("url_seq", "100"), ("seq", "10")]);
        s.update_prefix_list_entry(&moved).expect("moved");
        assert_eq!(seqs(&s), ["200", "10"]);
        let renumbered = params(&[("id", "pl1"), ("url_seq", "10"), ("delete", "seq")]);
        s.update_prefix_list_entry(&renumbered).expect("renumbered");
        assert_eq!(seqs(&s), ["200", "205"]);
        let gone = params(&[("id", "pl1"), ("url_seq", "7")]);
        let e = s
            .update_prefix_list_entry(&gone)
            .expect_err("no such entry");
        assert!(
            e.to_string()
                .contains("entry with sequence number 7 does not exist!")
        );
    }

    #[test]
    fn entries_are_added_and_removed() {
        let mut s = with_list(&[]);
        s.create_prefix_list_entry(&params(&[
            ("id", "pl1"),
            ("action", "deny"),
            ("prefix", "10.0.0.0/8"),
        ]))
        .expect("added");
        assert_eq!(seqs(&s), ["5"]);
        let e = s
            .create_prefix_list_entry(&params(&[
                ("id", "nope"),
                ("action", "deny"),
                ("prefix", "10.0.0.0/8"),
            ]))
            .expect_err("no list");
        assert!(
            e.to_string()
                .contains("could not find prefix list with id nope")
        );
        s.delete_prefix_list_entry(&params(&[("id", "pl1"), ("url_seq", "5")]))
            .expect("removed");
        let e = s
            .delete_prefix_list_entry(&params(&[("id", "pl1"), ("url_seq", "5")]))
            .expect_err("gone");
        assert!(
            e.to_string()
                .contains("could not find prefix list entry with seq 5")
        );
        assert!(s.prefix_list_entry("pl1", "5").is_err());
    }

    #[test]
    fn the_list_is_pending_until_applied_and_its_digest_guards_writes() {
        let mut s = with_list(&["action=permit,prefix=192.0.2.0/24"]);
        assert!(s.prefix_lists_index(View::Running).items.is_empty());
        let pending = s.prefix_lists_index(View::Pending);
        assert_eq!(pending.items["pl1"].state, Some(super::super::State::New));
        s.commit(None, false).expect("applied");
        assert!(
            s.prefix_lists_index(View::Running)
                .items
                .contains_key("pl1")
        );
        let stale = params(&[("id", "pl1"), ("delete", "entries"), ("digest", "0000")]);
        let e = s.update_prefix_list(&stale).expect_err("stale digest");
        assert!(e.to_string().contains("detected modified configuration"));
        let digest = s.prefix_lists.digest();
        let p = params(&[("id", "pl1"), ("delete", "entries"), ("digest", &digest)]);
        s.update_prefix_list(&p).expect("emptied");
        assert!(
            !s.get_prefix_list("pl1")
                .expect("there")
                .contains_key("entries")
        );
        let pending = s.prefix_lists_index(View::Pending);
        assert_eq!(
            pending.items["pl1"].state,
            Some(super::super::State::Changed)
        );
    }

    #[test]
    fn a_saved_world_keeps_lists_and_route_maps_pending_and_running() {
        let mut s = with_list(&["action=permit,prefix=192.0.2.0/24,le=28"]);
        s.create_route_map_entry(&params(&[
            ("route-map-id", "rm1"),
            ("order", "10"),
            ("action", "deny"),
        ]))
        .expect("route map");
        s.commit(None, false).expect("applied");
        s.delete_route_map_entry(&params(&[("route-map-id", "rm1"), ("order", "10")]))
            .expect("pending delete");
        let saved = serde_json::to_string(&s).expect("saved");
        let back: Sdn = serde_json::from_str(&saved).expect("loaded");
        assert_eq!(back, s);
        assert_eq!(back.route_map_ids(true), ["rm1"]);
        assert!(back.route_map_ids(false).is_empty());
        assert_eq!(
            back.prefix_list_entry("pl1", "5").expect("entry")["le"],
            json!(28)
        );
    }

    #[test]
    fn a_list_in_use_is_not_deleted() {
        let mut s = with_list(&[]);
        s.create_route_map_entry(&params(&[
            ("route-map-id", "rm1"),
            ("order", "10"),
            ("action", "permit"),
            ("match", "key=ip-address-prefix-list,value=pl1"),
        ]))
        .expect("route map");
        let e = s
            .delete_prefix_list(&params(&[("id", "pl1")]))
            .expect_err("in use");
        assert!(
            e.to_string().contains(
                "deleting prefix list failed: prefix list pl1 is still referenced by route map entry rm1 #10"
            ),
            "{e}"
        );
        s.delete_route_map_entry(&params(&[("route-map-id", "rm1"), ("order", "10")]))
            .expect("route map gone");
        s.delete_prefix_list(&params(&[("id", "pl1")]))
            .expect("deleted");
        let e = s
            .delete_prefix_list(&params(&[("id", "pl1")]))
            .expect_err("gone");
        assert!(
            e.to_string()
                .contains("could not find prefix list with id: pl1")
        );
    }
}
