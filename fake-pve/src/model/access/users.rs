//! Groups, users and their API tokens (pve-access-control `API2/Group.pm`,
//! `API2/User.pm`, `API2/TokenConfig`).

use super::*;

impl Access {
    /// Creates a group.
    ///
    /// # Errors
    /// 500 `create group failed: group '<g>' already exists`.
    pub fn create_group(&mut self, groupid: &str, comment: Option<String>) -> Result<()> {
        if self.groups.contains_key(groupid) {
            return Err(Error::exists(format!(
                "create group failed: group '{groupid}' already exists"
            )));
        }
        self.groups.insert(
            groupid.to_string(),
            Group {
                comment,
                members: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// Deletes a group and its ACL entries.
    ///
    /// # Errors
    /// 500 `delete group failed: group '<g>' does not exist`.
    pub fn delete_group(&mut self, groupid: &str) -> Result<()> {
        if self.groups.remove(groupid).is_none() {
            return Err(Error::not_found(format!(
                "delete group failed: group '{groupid}' does not exist"
            )));
        }
        self.remove_acl_subject(UgKind::Group, groupid);
        Ok(())
    }

    /// Puts a user into groups; with `replace`, takes it out of every
    /// other group first (`update_user` without `append`).
    ///
    /// # Errors
    /// 500 `no such group '<g>'` (the caller adds its prefix).
    pub fn set_user_groups(
        &mut self,
        userid: &str,
        groups: &[String],
        replace: bool,
    ) -> Result<()> {
        if let Some(g) = groups.iter().find(|g| !self.groups.contains_key(*g)) {
            // PVE has removed the old memberships by then, but the whole
            // change is not written.
            return Err(Error::not_found(format!("no such group '{g}'")));
        }
        if replace {
            for g in self.groups.values_mut() {
                g.members.remove(userid);
            }
        }
        for g in groups {
            if let Some(group) = self.groups.get_mut(g) {
                group.members.insert(userid.to_string());
            }
        }
        Ok(())
    }

    /// Deletes a user with its tokens, group memberships and ACL entries.
    pub fn delete_user(&mut self, userid: &str) {
        if let Some(user) = self.users.remove(userid) {
            for t in user.tokens.keys() {
                self.remove_acl_subject(UgKind::Token, &format!("{userid}!{t}"));
            }
        }
        for g in self.groups.values_mut() {
            g.members.remove(userid);
        }
        self.remove_acl_subject(UgKind::User, userid);
        self.tfa.remove_user(userid);
    }

    /// Every user, by userid.
    pub fn users(&self) -> &BTreeMap<String, User> {
        &self.users
    }

    /// User `userid`, to change its attributes.
    pub fn user_entry(&mut self, userid: &str) -> Option<&mut User> {
        self.users.get_mut(userid)
    }

    /// Adds (or replaces) a user; its groups are set with
    /// [`Access::set_user_groups`].
    pub fn put_user(&mut self, user: User) {
        self.users.insert(user.userid.clone(), user);
    }

    /// Every group, by groupid.
    pub fn groups(&self) -> &BTreeMap<String, Group> {
        &self.groups
    }

    /// Group `groupid`, to change its comment.
    pub fn group_entry(&mut self, groupid: &str) -> Option<&mut Group> {
        self.groups.get_mut(groupid)
    }

    /// The release, which decides the built-in roles and privileges.
    pub fn version(&self) -> PveVersion {
        self.version
    }

    /// Looks up a user.
    ///
    /// # Errors
    /// 500 `no such user ('<userid>')`.
    pub fn user(&self, userid: &str) -> Result<&User> {
        self.users
            .get(userid)
            .ok_or_else(|| Error::not_found(format!("no such user ('{userid}')")))
    }

    fn user_mut(&mut self, userid: &str) -> Result<&mut User> {
        self.users
            .get_mut(userid)
            .ok_or_else(|| Error::not_found(format!("no such user ('{userid}')")))
    }

    /// Looks up a token.
    ///
    /// # Errors
    /// 500 for an unknown user or token, with PVE's messages.
    pub fn token(&self, userid: &str, tokenid: &str) -> Result<&Token> {
        self.user(userid)?
            .tokens
            .get(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))
    }

    /// Creates a token and returns it with its secret, which is not kept:
    /// the token keeps its digest (see [`super::shadow`]). The secret is
    /// drawn with the server's key (see [`crate::model::Context::secret_uuid`]).
    ///
    /// # Errors
    /// 500 when the user is unknown or the token exists.
    pub fn create_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        privsep: bool,
        expire: i64,
        comment: Option<String>,
        rq: &mut crate::model::Context,
    ) -> Result<(Token, String)> {
        let user = self.user_mut(userid)?;
        if user.tokens.contains_key(tokenid) {
            return Err(Error::invalid("tokenid", "Token already exists."));
        }
        let secret = rq.secret_uuid();
        let token = Token {
            tokenid: tokenid.to_string(),
            secret: super::shadow::token_digest(&secret),
            privsep,
            expire,
            comment,
        };
        user.tokens.insert(tokenid.to_string(), token.clone());
        Ok((token, secret))
    }

    /// Changes a token's settings; `None` keeps a value.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn update_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        privsep: Option<bool>,
        expire: Option<i64>,
        comment: Option<String>,
    ) -> Result<Token> {
        let token = self
            .user_mut(userid)?
            .tokens
            .get_mut(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        if let Some(p) = privsep {
            token.privsep = p;
        }
        if let Some(e) = expire {
            token.expire = e;
        }
        if let Some(c) = comment {
            token.comment = Some(c);
        }
        Ok(token.clone())
    }

    /// Draws a new secret for a token (9.2's `regenerate`): the old one
    /// stops working at once. Answers the new secret, which is not kept.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn regenerate_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        rq: &mut crate::model::Context,
    ) -> Result<String> {
        let token = self
            .user_mut(userid)?
            .tokens
            .get_mut(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        let secret = rq.secret_uuid();
        token.secret = super::shadow::token_digest(&secret);
        Ok(secret)
    }

    /// Removes a token's comment.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn clear_token_comment(&mut self, userid: &str, tokenid: &str) -> Result<Token> {
        let token = self
            .user_mut(userid)?
            .tokens
            .get_mut(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        token.comment = None;
        Ok(token.clone())
    }

    /// Removes a token.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn delete_token(&mut self, userid: &str, tokenid: &str) -> Result<()> {
        self.user_mut(userid)?
            .tokens
            .remove(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        self.remove_acl_subject(UgKind::Token, &format!("{userid}!{tokenid}"));
        Ok(())
    }
}

pub(super) fn no_such_token(userid: &str, tokenid: &str) -> Error {
    Error::not_found(format!("no such token '{tokenid}' for user '{userid}'"))
}
