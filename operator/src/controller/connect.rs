//! Connections to clusters: credentials, TLS, the cached clients.

use pve_client::{Client, Config, ConfigBuilder};

use super::{EnvCluster, Operator, Pve, World};
use crate::error::{Error, Result};
use crate::types::ValueSource;

impl Operator {
    fn resolve(&self, world: &World, v: &ValueSource, what: &str) -> Result<String> {
        if let Some(r) = &v.secret_ref {
            let s = world
                .secrets
                .get(&r.name)
                .ok_or_else(|| Error::Config(format!("{what}: secret '{}' not found", r.name)))?;
            return s.string_data.get(&r.key).cloned().ok_or_else(|| {
                Error::Config(format!(
                    "{what}: secret '{}' has no key '{}'",
                    r.name, r.key
                ))
            });
        }
        if let Some(f) = &v.file {
            let p = world.dir.join(f);
            return std::fs::read_to_string(&p)
                .map(|s| s.trim().to_string())
                .map_err(|e| Error::Config(format!("{what}: {}: {e}", p.display())));
        }
        v.value
            .clone()
            .ok_or_else(|| Error::Config(format!("{what}: give secretRef, file or value")))
    }

    /// A connected client for a cluster (cached while its settings stay
    /// the same).
    ///
    /// # Errors
    /// Missing cluster or secrets, unreachable PVE, refused credentials.
    pub async fn connect(&self, world: &World, cluster: &str) -> Result<Pve> {
        let Some(c) = world.clusters.get(cluster) else {
            if let Some(env) = self.env_cluster.as_ref().filter(|e| e.name == cluster) {
                return self.connect_env(env).await;
            }
            return Err(Error::Config(format!(
                "ProxmoxCluster '{cluster}' not found"
            )));
        };
        let s = &c.spec;
        let mut b = Config::builder().endpoint(&s.endpoint);
        let creds = &s.credentials;
        let mut fp = format!(
            "{}|{}|{:?}",
            s.endpoint, s.insecure_skip_tls_verify, s.fingerprint
        );
        if let (Some(id), Some(sec)) = (creds.full_token_id(), &creds.token_secret) {
            let secret = self.resolve(world, sec, "credentials.tokenSecret")?;
            fp.push_str(&format!("|t:{id}:{secret}"));
            b = b.token(id, secret);
        } else if let Some(pw) = &creds.password {
            let password = self.resolve(world, pw, "credentials.password")?;
            fp.push_str(&format!("|p:{}:{password}", creds.username));
            b = b.password(creds.username.clone(), password);
        } else {
            return Err(Error::Config(
                "credentials: give password or tokenID with tokenSecret".into(),
            ));
        }
        if s.insecure_skip_tls_verify {
            b = b.insecure_skip_verify(true);
        }
        if let Some(f) = &s.fingerprint {
            b = b.fingerprint(f.clone());
        }
        if let Some(ca) = &s.ca_certificate {
            let pem = self.resolve(world, ca, "caCertificate")?;
            fp.push_str(&format!("|ca:{}", pem.len()));
            b = b.ca_bundle_pem(pem);
        }
        match (&s.client_certificate, &s.client_key) {
            (Some(c), Some(k)) => {
                let cert = self.resolve(world, c, "clientCertificate")?;
                let key = self.resolve(world, k, "clientKey")?;
                fp.push_str(&format!("|cc:{}:{}", cert.len(), key.len()));
                b = b.client_certificate_pem(cert, key);
            }
            (None, None) => {}
            _ => {
                return Err(Error::Config(
                    "clientCertificate and clientKey go together".into(),
                ));
            }
        }
        self.connect_with(cluster, b, fp).await
    }

    /// Whether `cluster` is declared, or is the one the environment gives.
    pub fn knows_cluster(&self, world: &World, cluster: &str) -> bool {
        world.clusters.contains_key(cluster)
            || self.env_cluster.as_ref().is_some_and(|e| e.name == cluster)
    }

    /// The cluster of the `PVE_*` variables (pve-client's
    /// `ConfigBuilder::with_env`).
    async fn connect_env(&self, env: &EnvCluster) -> Result<Pve> {
        let b = Config::builder()
            .with_env(|k| env.vars.get(k).cloned())
            .map_err(Error::Pve)?;
        let fp = format!("env|{:?}", env.vars);
        self.connect_with(&env.name, b, fp).await
    }

    /// Tunes, observes, builds and connects (or reuses the client made
    /// with the same settings, `fp`).
    async fn connect_with(&self, cluster: &str, mut b: ConfigBuilder, fp: String) -> Result<Pve> {
        if let Some(t) = &self.tuning {
            b = t(b);
        }
        // Every call the client makes, typed, counted by its outcome.
        let (ok, failed) = (self.metrics.clone(), self.metrics.clone());
        b = b
            .observer(move |method, path, _| ok.api_request(method.as_str(), path, "200"))
            .error_observer(move |method, path, e| {
                let status = e
                    .status()
                    .map_or_else(|| "error".to_string(), |s| s.to_string());
                failed.api_request(method.as_str(), path, &status);
            });
        if let Some((f, client)) = self
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cluster)
            && *f == fp
        {
            return Ok(Pve {
                client: client.clone(),
            });
        }
        let config = b.build().map_err(Error::Pve)?;
        let client = Client::connect(config).await;
        self.metrics.api_request(
            "GET",
            "/version",
            if client.is_ok() { "200" } else { "error" },
        );
        let client = client?;
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cluster.to_string(), (fp, client.clone()));
        Ok(Pve { client })
    }

    /// Forgets a cluster's client (after authentication failures).
    pub(super) fn drop_conn(&self, cluster: &str) {
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(cluster);
    }
}
