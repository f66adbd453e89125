//! A file's aliases (`[ALIASES]`): named addresses and networks a rule
//! or IP set may use.

use super::{Alias, Digested, Firewall, Level, check_digest, digested, strip_host_len, trimmed};
use crate::model::{Error, Result};

impl Firewall {
    /// `GET .../aliases`.
    pub fn aliases(&self, level: &Level) -> Digested<&Alias> {
        let list = self
            .conf(level)
            .map(|c| c.aliases.values().collect())
            .unwrap_or_default();
        digested(list, |a, d| a.digest_into(d))
    }

    /// `GET .../aliases/{name}`.
    ///
    /// # Errors
    /// `name`: `no such alias`.
    pub fn alias(&self, level: &Level, name: &str) -> Result<&Alias> {
        self.conf(level)
            .and_then(|c| c.aliases.get(&name.to_ascii_lowercase()))
            .ok_or_else(|| Error::invalid("name", "no such alias"))
    }

    /// `POST .../aliases`.
    ///
    /// # Errors
    /// `name`: `alias 'x' already exists`.
    pub fn create_alias(
        &mut self,
        level: &Level,
        name: &str,
        cidr: &str,
        comment: Option<&str>,
    ) -> Result<()> {
        let key = name.to_ascii_lowercase();
        if self
            .conf(level)
            .is_some_and(|c| c.aliases.contains_key(&key))
        {
            return Err(Error::invalid(
                "name",
                format!("alias '{name}' already exists"),
            ));
        }
        let alias = Alias {
            name: name.to_string(),
            cidr: strip_host_len(cidr),
            comment: trimmed(comment),
        };
        self.conf_mut(level).aliases.insert(key, alias);
        Ok(())
    }

    /// `PUT .../aliases/{name}`: a new address and comment (the comment
    /// goes when not given), and maybe a new name.
    ///
    /// # Errors
    /// A changed `digest`; `name`: `no such alias`, `alias 'x' already
    /// exists`.
    pub fn update_alias(
        &mut self,
        level: &Level,
        name: &str,
        cidr: &str,
        comment: Option<&str>,
        rename: Option<&str>,
        digest: Option<&str>,
    ) -> Result<()> {
        check_digest(digest, &self.aliases(level).digest)?;
        let key = name.to_ascii_lowercase();
        if !self
            .conf(level)
            .is_some_and(|c| c.aliases.contains_key(&key))
        {
            return Err(Error::invalid("name", "no such alias"));
        }
        let mut alias = Alias {
            name: name.to_string(),
            cidr: strip_host_len(cidr),
            comment: trimmed(comment),
        };
        let conf = self.conf_mut(level);
        match rename.filter(|r| !r.is_empty()) {
            Some(new) if new.to_ascii_lowercase() != key => {
                let new_key = new.to_ascii_lowercase();
                if conf.aliases.contains_key(&new_key) {
                    // PVE has set the alias before it refuses; nothing is
                    // saved.
                    return Err(Error::invalid(
                        "name",
                        format!("alias '{new}' already exists"),
                    ));
                }
                alias.name = new.to_string();
                conf.aliases.remove(&key);
                conf.aliases.insert(new_key, alias);
            }
            _ => {
                conf.aliases.insert(key, alias);
            }
        }
        Ok(())
    }

    /// `DELETE .../aliases/{name}`: no error for an alias that is not
    /// there, nor for one that rules use (they show an error then).
    ///
    /// # Errors
    /// A changed `digest`.
    pub fn delete_alias(&mut self, level: &Level, name: &str, digest: Option<&str>) -> Result<()> {
        check_digest(digest, &self.aliases(level).digest)?;
        self.conf_mut(level)
            .aliases
            .remove(&name.to_ascii_lowercase());
        self.tidy();
        Ok(())
    }
}
