//! Why a document of another system cannot be translated; each message
//! is the one the document's report shows after its name.

/// Why a foreign document cannot be translated.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    /// A kind its system does not have (or this operator does not read).
    #[error("kind {kind} of {api_version} is not known")]
    UnknownKind {
        /// The kind.
        kind: String,
        /// The system's `apiVersion`.
        api_version: String,
    },
    /// A field that should hold a mapping holds something else.
    #[error("{at}: expected a mapping")]
    NotAMapping {
        /// The field (empty: the document).
        at: String,
    },
    /// A field its system does not document.
    #[error("{at}: unknown field `{field}`, expected one of {}", quoted(.expected))]
    UnknownField {
        /// Where (empty: the document).
        at: String,
        /// The field.
        field: String,
        /// The fields documented there.
        expected: Vec<String>,
    },
    /// A field that must be given is missing.
    #[error("{0} is required")]
    Required(String),
    /// A field holds what its system does not take: `why` says what it
    /// takes.
    #[error("{at}: {why}")]
    Invalid {
        /// The field.
        at: String,
        /// What is wrong, and what would do.
        why: String,
    },
    /// A referenced object is not declared (`Secret 'x'`, `VMClass 'c'
    /// (classRef of vm)`).
    #[error("{0} not found")]
    NotFound(String),
    /// A site a ProxmoxVM names is not in its ProviderConfig.
    #[error("site '{site}' is not a site of ProviderConfig '{config}'")]
    UnknownSite {
        /// The site.
        site: String,
        /// The ProviderConfig.
        config: String,
    },
    /// A VMClone's source is not declared, and no single Provider says
    /// where to look for it.
    #[error(
        "VirtualMachine '{0}' (sourceVMRef) not found, and no single Provider to find a VM of that name in (give spec.providerRef)"
    )]
    CloneSourceNotFound(String),
    /// A Secret lacks the key a reference names.
    #[error("Secret '{secret}' has no key '{key}'")]
    SecretKeyMissing {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
    },
    /// A Secret's key is not the JSON its system reads.
    #[error("Secret '{secret}' key '{key}': not JSON ({source})")]
    SecretNotJson {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// A Secret's JSON holds neither a password login nor a token.
    #[error(
        "Secret '{secret}' key '{key}': give username and password, or tokenID and tokenSecret"
    )]
    SecretKeyWithoutCredentials {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
    },
    /// A Secret's `token` is not `USER@REALM!ID=SECRET`.
    #[error("Secret '{0}': token is not USER@REALM!ID=SECRET")]
    SecretTokenMalformed(String),
    /// A Secret has `token_id` without `token_secret`.
    #[error("Secret '{0}' has token_id but no token_secret")]
    SecretTokenWithoutSecret(String),
    /// A Secret holds no credentials.
    #[error("Secret '{0}' has neither token_id and token_secret nor username and password")]
    SecretWithoutCredentials(String),
    /// A Provider names no Secret and the environment gives no
    /// credentials.
    #[error(
        "no credentials: name a Secret in spec.credentialSecretRef or set PVE_TOKEN_ID and PVE_TOKEN_SECRET (or PVE_USERNAME and PVE_PASSWORD)"
    )]
    NoCredentials,
    /// A machine that names no cluster, and none to put it on.
    #[error("no ProxmoxCluster to put the machine on: declare one or set PROXMOX_DEFAULT_CLUSTER")]
    NoCluster,
    /// A machine that names no cluster, and several to choose from (their
    /// names).
    #[error(
        "several ProxmoxClusters ({}): set PROXMOX_DEFAULT_CLUSTER to the one machines go to",
        .0.join(", ")
    )]
    SeveralClusters(Vec<String>),
    /// The translation is not a valid native object.
    #[error("{0}")]
    Native(#[from] serde_json::Error),
}

impl TranslateError {
    /// [`TranslateError::Invalid`].
    pub(super) fn invalid(at: impl Into<String>, why: impl Into<String>) -> Self {
        Self::Invalid {
            at: at.into(),
            why: why.into(),
        }
    }

    /// [`TranslateError::Required`].
    pub(super) fn required(field: impl Into<String>) -> Self {
        Self::Required(field.into())
    }

    /// [`TranslateError::NotFound`].
    pub(super) fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound(what.into())
    }
}

/// `` `a`, `b` ``.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::TranslateError;

    #[test]
    fn messages_read_as_the_reports_show_them() {
        let e = TranslateError::UnknownField {
            at: "spec".into(),
            field: "cpu".into(),
            expected: vec!["cpus".into(), "memory".into()],
        };
        assert_eq!(
            e.to_string(),
            "spec: unknown field `cpu`, expected one of `cpus`, `memory`"
        );
        let e = TranslateError::NotAMapping { at: String::new() };
        assert_eq!(e.to_string(), ": expected a mapping");
        let e = TranslateError::SeveralClusters(vec!["a".into(), "b".into()]);
        assert_eq!(
            e.to_string(),
            "several ProxmoxClusters (a, b): set PROXMOX_DEFAULT_CLUSTER to the one machines go to"
        );
        let e = TranslateError::not_found(format!("VMClass '{}' (classRef of {})", "small", "web"));
        assert_eq!(e.to_string(), "VMClass 'small' (classRef of web) not found");
    }
}
