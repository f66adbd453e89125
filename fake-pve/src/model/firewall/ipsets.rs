//! A file's IP sets (`[IPSET <name>]`): listed, created, renamed and
//! deleted, and their entries (addresses, networks, aliases).

use serde_json::{Map, Value, json};

use super::{
    Firewall, IpEntry, IpSet, Level, check_digest, clean_cidr, rules, strip_host_len, trimmed,
    with_digest,
};
use crate::model::{Error, Result};

impl Firewall {
    fn ipset_list(&self, level: &Level) -> (Vec<Value>, String) {
        let list = self
            .conf(level)
            .map(|c| {
                c.ipsets
                    .iter()
                    .map(|(name, s)| {
                        let mut m = Map::new();
                        if let Some(c) = &s.comment {
                            m.insert("comment".into(), json!(c));
                        }
                        m.insert("name".into(), json!(name));
                        m
                    })
                    .collect()
            })
            .unwrap_or_default();
        with_digest(list)
    }

    /// `GET .../ipset`.
    pub fn ipsets(&self, level: &Level) -> Vec<Value> {
        self.ipset_list(level).0
    }

    /// `POST .../ipset`: a new, empty IP set, or (with `rename`) one
    /// renamed.
    ///
    /// # Errors
    /// `name`: `IPSet 'x' already exists`, `IPSet 'x' does not exist`,
    /// `IPSet 'x' does already exist`; a changed `digest`.
    pub fn create_ipset(
        &mut self,
        level: &Level,
        name: &str,
        comment: Option<&str>,
        rename: Option<&str>,
        digest: Option<&str>,
    ) -> Result<()> {
        let key = name.to_ascii_lowercase();
        let has = |fw: &Self, n: &str| fw.conf(level).is_some_and(|c| c.ipsets.contains_key(n));
        if let Some(old) = rename.filter(|r| !r.is_empty()) {
            check_digest(digest, &self.ipset_list(level).1)?;
            if !has(self, old) {
                return Err(Error::invalid(
                    "name",
                    format!("IPSet '{old}' does not exist"),
                ));
            }
            if has(self, name) && name != old {
                return Err(Error::invalid(
                    "name",
                    format!("IPSet '{name}' does already exist"),
                ));
            }
            let conf = self.conf_mut(level);
            let Some(mut set) = conf.ipsets.remove(old) else {
                return Ok(());
            };
            if let Some(c) = comment {
                set.comment = trimmed(Some(c));
            }
            conf.ipsets.insert(key, set);
        } else {
            if has(self, name) {
                return Err(Error::invalid(
                    "name",
                    format!("IPSet '{name}' already exists"),
                ));
            }
            let conf = self.conf_mut(level);
            let set = conf.ipsets.entry(key).or_default();
            if comment.is_some() {
                set.comment = trimmed(comment);
            }
        }
        self.tidy();
        Ok(())
    }

    fn ipset_ref(&self, level: &Level, name: &str) -> Result<&IpSet> {
        self.conf(level)
            .and_then(|c| c.ipsets.get(name))
            .ok_or_else(|| Error::not_found(format!("no such IPSet '{name}'")))
    }

    /// Whether an alias reference resolves (`resolve_alias`), from the
    /// file `level` (the cluster's aliases are the fallback).
    fn resolves(&self, level: &Level, scope: &str, alias: &str) -> bool {
        let alias = alias.to_ascii_lowercase();
        let local = match level {
            Level::Cluster => None,
            l => self.conf(l),
        };
        let mut found = false;
        if scope != "dc/"
            && let Some(l) = local
        {
            found = l.aliases.contains_key(&alias);
        }
        if scope != "guest/" && !found {
            found = self.cluster.aliases.contains_key(&alias);
        }
        found
    }

    fn ipset_entries(&self, level: &Level, name: &str) -> Result<(Vec<Value>, String)> {
        let set = self.ipset_ref(level, name)?;
        let mut list = Vec::new();
        let mut errs = Vec::new();
        for (cidr, e) in &set.entries {
            let mut m = Map::new();
            m.insert("cidr".into(), json!(cidr));
            if let Some(c) = &e.comment {
                m.insert("comment".into(), json!(c));
            }
            if e.nomatch {
                m.insert("nomatch".into(), json!(1));
            }
            list.push(m);
            let err = rules::alias_ref(cidr)
                .filter(|(scope, a)| !self.resolves(level, scope, a))
                .map(|(_, a)| format!("no such alias '{a}'"));
            errs.push(err);
        }
        let (mut out, digest) = with_digest(list);
        for (v, e) in out.iter_mut().zip(errs) {
            if let Some(e) = e {
                v["errors"] = json!({ "cidr": e });
            }
        }
        Ok((out, digest))
    }

    /// `GET .../ipset/{name}`: the entries, sorted.
    ///
    /// # Errors
    /// `no such IPSet 'x'`.
    pub fn ipset(&self, level: &Level, name: &str) -> Result<Vec<Value>> {
        Ok(self.ipset_entries(level, name)?.0)
    }

    /// `DELETE .../ipset/{name}`: only an empty set unless `force`.
    ///
    /// # Errors
    /// `no such IPSet 'x'`, `IPSet 'x' is not empty`.
    pub fn delete_ipset(&mut self, level: &Level, name: &str, force: bool) -> Result<()> {
        let set = self.ipset_ref(level, name)?;
        if !set.entries.is_empty() && !force {
            return Err(Error::conflict(format!("IPSet '{name}' is not empty")));
        }
        self.conf_mut(level).ipsets.remove(name);
        self.tidy();
        Ok(())
    }

    /// `POST .../ipset/{name}`: an address, network or alias joins the
    /// set.
    ///
    /// # Errors
    /// `no such IPSet 'x'`, `no such alias 'x'`; `cidr`: `address 'x'
    /// already exists`, `a zero prefix is not allowed in ipset entries`.
    pub fn add_ip(
        &mut self,
        level: &Level,
        name: &str,
        cidr: &str,
        nomatch: bool,
        comment: Option<&str>,
    ) -> Result<()> {
        let set = self.ipset_ref(level, name)?;
        let cidr = if let Some((scope, alias)) = rules::alias_ref(cidr) {
            if !self.resolves(level, scope, alias) {
                return Err(Error::failed(format!("no such alias '{alias}'")));
            }
            cidr.to_string()
        } else {
            strip_host_len(&clean_cidr(cidr))
        };
        if set.entries.contains_key(&cidr) {
            return Err(Error::invalid(
                "cidr",
                format!("address '{cidr}' already exists"),
            ));
        }
        if cidr
            .rsplit_once('/')
            .is_some_and(|(_, l)| !l.is_empty() && l.bytes().all(|b| b == b'0'))
        {
            return Err(Error::invalid(
                "cidr",
                "a zero prefix is not allowed in ipset entries",
            ));
        }
        let entry = IpEntry {
            nomatch,
            comment: trimmed(comment),
        };
        if let Some(s) = self.conf_mut(level).ipsets.get_mut(name) {
            s.entries.insert(cidr, entry);
        }
        Ok(())
    }

    /// `GET .../ipset/{name}/{cidr}`.
    ///
    /// # Errors
    /// `no such IPSet 'x'`; `cidr`: `no such IP/Network`.
    pub fn ip(&self, level: &Level, name: &str, cidr: &str) -> Result<Value> {
        self.ipset_entries(level, name)?
            .0
            .into_iter()
            .find(|e| e["cidr"] == cidr)
            .ok_or_else(|| Error::invalid("cidr", "no such IP/Network"))
    }

    /// `PUT .../ipset/{name}/{cidr}`: `nomatch` and `comment` as given
    /// (each goes when not given).
    ///
    /// # Errors
    /// `no such IPSet 'x'`, a changed `digest`; `cidr`: `no such
    /// IP/Network`.
    pub fn update_ip(
        &mut self,
        level: &Level,
        name: &str,
        cidr: &str,
        nomatch: bool,
        comment: Option<&str>,
        digest: Option<&str>,
    ) -> Result<()> {
        let (_, d) = self.ipset_entries(level, name)?;
        check_digest(digest, &d)?;
        let conf = self.conf_mut(level);
        let entry = conf
            .ipsets
            .get_mut(name)
            .and_then(|s| s.entries.get_mut(cidr))
            .ok_or_else(|| Error::invalid("cidr", "no such IP/Network"))?;
        entry.nomatch = nomatch;
        entry.comment = trimmed(comment);
        Ok(())
    }

    /// `DELETE .../ipset/{name}/{cidr}`: no error for an entry that is
    /// not there.
    ///
    /// # Errors
    /// `no such IPSet 'x'`, a changed `digest`.
    pub fn remove_ip(
        &mut self,
        level: &Level,
        name: &str,
        cidr: &str,
        digest: Option<&str>,
    ) -> Result<()> {
        let (_, d) = self.ipset_entries(level, name)?;
        check_digest(digest, &d)?;
        if let Some(s) = self.conf_mut(level).ipsets.get_mut(name) {
            s.entries.remove(cidr);
        }
        Ok(())
    }
}
