//! A file's IP sets (`[IPSET <name>]`): listed, created, renamed and
//! deleted, and their entries (addresses, networks, aliases).

use super::{
    Digested, Firewall, IpEntry, IpRead, IpSet, Level, Section, check_digest, clean_cidr, digested,
    rules, sections, strip_host_len, trimmed,
};
use crate::model::{Error, Result};

impl Firewall {
    /// `GET .../ipset`.
    pub fn ipsets(&self, level: &Level) -> Digested<Section<'_>> {
        let list = self
            .conf(level)
            .map(|c| {
                c.ipsets
                    .iter()
                    .map(|(name, s)| Section {
                        name,
                        comment: s.comment.as_deref(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        sections("name", list)
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
            check_digest(digest, &self.ipsets(level).digest)?;
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

    /// `GET .../ipset/{name}`: the entries, sorted, each with the error
    /// of an alias that does not resolve (left out of the digest).
    ///
    /// # Errors
    /// `no such IPSet 'x'`.
    pub fn ipset(&self, level: &Level, name: &str) -> Result<Digested<IpRead<'_>>> {
        let set = self.ipset_ref(level, name)?;
        let list = set
            .entries
            .iter()
            .map(|(cidr, entry)| IpRead {
                cidr,
                entry,
                error: rules::alias_ref(cidr)
                    .filter(|(scope, a)| !self.resolves(level, scope, a))
                    .map(|(_, a)| format!("no such alias '{a}'")),
            })
            .collect();
        Ok(digested(list, |e, d| {
            d.field("cidr", e.cidr);
            d.opt("comment", e.entry.comment.as_deref());
            if e.entry.nomatch {
                d.field("nomatch", 1);
            }
        }))
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

    /// `GET .../ipset/{name}/{cidr}`: the entry and its set's digest.
    ///
    /// # Errors
    /// `no such IPSet 'x'`; `cidr`: `no such IP/Network`.
    pub fn ip(&self, level: &Level, name: &str, cidr: &str) -> Result<(IpRead<'_>, String)> {
        let Digested { items, digest } = self.ipset(level, name)?;
        items
            .into_iter()
            .find(|e| e.cidr == cidr)
            .map(|e| (e, digest))
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
        check_digest(digest, &self.ipset(level, name)?.digest)?;
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
        check_digest(digest, &self.ipset(level, name)?.digest)?;
        if let Some(s) = self.conf_mut(level).ipsets.get_mut(name) {
            s.entries.remove(cidr);
        }
        Ok(())
    }
}
