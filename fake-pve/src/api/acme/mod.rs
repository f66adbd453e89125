//! ACME (pve-manager `API2/ACMEAccount.pm`, `API2/ACMEPlugin.pm`,
//! `API2/ACME.pm`): accounts and challenge plugins under
//! `/cluster/acme`, a node certificate's order, renewal and revocation
//! under `/nodes/{node}/certificates/acme`, with the CA fake-pve emulates
//! (`model::acme`). The account calls are root@pam's (no permissions in
//! the schema), the plugins' need `Sys.Modify` on `/`, the certificate's
//! `Sys.Modify` on the node.

pub mod view;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::params::value_text;
use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::acme::directory::{Ca, LE_V2};
use crate::model::acme::order::{self, Kind, NodeAcme};
use crate::model::{Error, Result};
use crate::spec::formats::split_list;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/acme/account", account_index),
        post("/cluster/acme/account", register_account),
        get("/cluster/acme/account/{name}", get_account),
        put("/cluster/acme/account/{name}", update_account),
        delete("/cluster/acme/account/{name}", deactivate_account),
        get("/cluster/acme/tos", get_tos),
        get("/cluster/acme/meta", get_meta),
        get("/cluster/acme/directories", get_directories),
        get("/cluster/acme/challenge-schema", challenge_schema),
        get("/cluster/acme/plugins", plugin_index),
        post("/cluster/acme/plugins", add_plugin),
        get("/cluster/acme/plugins/{id}", get_plugin),
        put("/cluster/acme/plugins/{id}", update_plugin),
        delete("/cluster/acme/plugins/{id}", delete_plugin),
        post(
            "/nodes/{node}/certificates/acme/certificate",
            new_certificate,
        ),
        put(
            "/nodes/{node}/certificates/acme/certificate",
            renew_certificate,
        ),
        delete(
            "/nodes/{node}/certificates/acme/certificate",
            revoke_certificate,
        ),
    ]
}

fn local(ctx: &Ctx<'_>) -> String {
    ctx.with(|c| c.nodes().local().to_string())
}

fn account_name(ctx: &Ctx<'_>) -> String {
    ctx.params.str("name").unwrap_or_else(|| "default".into())
}

/// `GET /cluster/acme/account`.
fn account_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let names = ctx.with(|c| c.acme().account_names());
    Ok(Value::Array(names.into_iter().map(|n| json!({ "name": n })).collect()).into())
}

/// `POST /cluster/acme/account`: an `acmeregister` task.
fn register_account(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = account_name(ctx);
    let directory = ctx.params.str("directory").unwrap_or_else(|| LE_V2.into());
    let contact = crate::model::acme::contact_urls(&ctx.params.str("contact").unwrap_or_default());
    let tos = ctx.params.str("tos_url");
    let now = ctx.state.clock().now();
    let exists = ctx.with(|c| c.acme().account(&name).is_some());
    // The key is made before the model is taken (RSA 4096; one per
    // process, see `pki`).
    let key = if exists {
        String::new()
    } else {
        crate::pki::rsa_key(4096, 1).map_err(Error::failed)?
    };
    let node = local(ctx);
    let upid = ctx.start_prepared(&node, |c| {
        c.acme_mut()
            .register(&name, &directory, &contact, tos.as_deref(), key, now)
    })?;
    Ok(json!(upid).into())
}

/// `GET /cluster/acme/account/{name}`.
fn get_account(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = account_name(ctx);
    ctx.with(|c| Ok(view::account(c.acme().existing(&name)?).into()))
}

/// `PUT /cluster/acme/account/{name}`: `acmeupdate` with contacts, else
/// `acmerefresh`.
fn update_account(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = account_name(ctx);
    let contact = crate::model::acme::contact_urls(&ctx.params.str("contact").unwrap_or_default());
    let node = local(ctx);
    let upid = ctx.start_prepared(&node, |c| c.acme().update(&name, &contact))?;
    Ok(json!(upid).into())
}

/// `DELETE /cluster/acme/account/{name}`: `acmedeactivate`.
fn deactivate_account(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = account_name(ctx);
    let node = local(ctx);
    let upid = ctx.start_prepared(&node, |c| c.acme().deactivate(&name))?;
    Ok(json!(upid).into())
}

/// The directory a call names (Let's Encrypt's production one by
/// default).
fn directory(ctx: &Ctx<'_>) -> Result<Ca> {
    let url = ctx.params.str("directory").unwrap_or_else(|| LE_V2.into());
    Ca::of(&url).map_err(Error::failed)
}

/// `GET /cluster/acme/tos` (deprecated for `meta`).
fn get_tos(ctx: &Ctx<'_>) -> Result<Reply> {
    let ca = directory(ctx)?;
    Ok(ca.meta()["termsOfService"].clone().into())
}

/// `GET /cluster/acme/meta`.
fn get_meta(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(directory(ctx)?.meta().into())
}

/// `GET /cluster/acme/directories`.
fn get_directories(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(view::directories().into())
}

/// The release's DNS API plugins (the `api` enum of its schema).
fn dns_apis(ctx: &Ctx<'_>) -> Vec<String> {
    let v = ctx.state.settings().version;
    crate::spec::spec(v)
        .endpoint("POST", "/cluster/acme/plugins")
        .and_then(|e| e.parameters.properties.get("api"))
        .and_then(|p| p.enumeration.clone())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// `GET /cluster/acme/challenge-schema`: the DNS plugins in id order
/// (the `standalone` type has none).
fn challenge_schema(ctx: &Ctx<'_>) -> Result<Reply> {
    let mut ids = dns_apis(ctx);
    ids.sort();
    Ok(Value::Array(
        ids.iter()
            .map(|id| view::challenge(id, crate::model::acme::dns_schema::schema(id)))
            .collect(),
    )
    .into())
}

/// The plugin options of a call, as text.
fn given(ctx: &Ctx<'_>) -> BTreeMap<String, String> {
    ctx.params
        .names()
        .filter(|n| !matches!(*n, "id" | "type" | "delete" | "digest"))
        .filter_map(|n| ctx.params.get(n).map(|v| (n.to_string(), value_text(v))))
        .collect()
}

/// `GET /cluster/acme/plugins`: every plugin (of `type`), in id order.
fn plugin_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx.params.str("type");
    let list = ctx.with(|c| {
        let plugins = c.acme().plugins();
        let digest = plugins.digest();
        plugins
            .load()
            .iter()
            .filter(|(_, p)| kind.is_none() || p.get("type") == kind.as_ref())
            .map(|(id, p)| view::plugin(id, p, &digest))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(list).into())
}

/// `GET /cluster/acme/plugins/{id}`.
fn get_plugin(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| {
        let plugins = c.acme().plugins();
        let p = plugins
            .get(&id)
            .ok_or_else(|| Error::failed(format!("ACME plugin '{id}' not defined")))?;
        Ok(view::plugin(&id, &p, &plugins.digest()).into())
    })
}

/// `POST /cluster/acme/plugins`.
fn add_plugin(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let kind = ctx.param("type")?;
    let opts = given(ctx);
    ctx.with(|c| c.acme_mut().plugins_mut().add(&id, &kind, &opts))?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/acme/plugins/{id}`.
fn update_plugin(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let opts = given(ctx);
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.acme_mut()
            .plugins_mut()
            .update(&id, &opts, &delete, digest.as_deref())
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/acme/plugins/{id}`.
fn delete_plugin(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| c.acme_mut().plugins_mut().remove(&id));
    Ok(Value::Null.into())
}

/// What the certificate calls read of a node before they fork: its ACME
/// settings, its custom certificate, the directory of its account.
struct NodeState {
    conf: NodeAcme,
    custom: Option<crate::model::node_hw::CustomCert>,
    directory: Option<String>,
}

fn node_state(ctx: &Ctx<'_>, node: &str) -> NodeState {
    ctx.with(|c| {
        let options = c
            .node_services
            .sys(&c.nodes, c.version, node)
            .ok()
            .and_then(|s| s.config().map(|conf| conf.options()))
            .unwrap_or_default();
        let conf = order::node_acme(&options);
        let directory = c.acme().account(&conf.account).map(|a| a.directory.clone());
        NodeState {
            custom: c.hardware().node(node).custom_cert().cloned(),
            conf,
            directory,
        }
    })
}

fn domains_required(conf: &NodeAcme) -> Result<()> {
    if conf.domains.is_empty() {
        return Err(Error::BadRequest(
            "ACME domain list in node configuration is missing!".into(),
        ));
    }
    Ok(())
}

/// Orders the certificate (`acmenewcert`, `acmerenew`): issued before
/// the model is taken again, the task planned with it.
fn order_task(ctx: &Ctx<'_>, node: &str, st: NodeState, kind: Kind) -> Result<Reply> {
    let now = ctx.state.clock().now();
    let domains: Vec<String> = st.conf.domains.iter().map(|d| d.domain.clone()).collect();
    let issued = st
        .directory
        .as_deref()
        .and_then(|d| Ca::of(d).ok())
        .map(|ca| crate::pki::acme_ca::issue(ca.staging(), &domains, now));
    let old = st.custom.map(|c| c.pem);
    let upid = ctx.start_prepared(node, |c| {
        let issue = |_: bool, _: &[String]| {
            issued
                .clone()
                .unwrap_or_else(|| Err("no certificate URL available (yet?)".into()))
        };
        Ok(order::plan(
            c.acme_mut(),
            node,
            &st.conf,
            kind,
            old.as_deref(),
            &issue,
        ))
    })?;
    Ok(json!(upid).into())
}

/// `POST /nodes/{node}/certificates/acme/certificate`.
fn new_certificate(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let st = node_state(ctx, &node);
    if st.custom.is_some() && !force {
        return Err(Error::invalid(
            "force",
            "Custom certificate exists but 'force' is not set.",
        ));
    }
    domains_required(&st.conf)?;
    order_task(ctx, &node, st, Kind::New)
}

/// `PUT /nodes/{node}/certificates/acme/certificate`: only within 30
/// days of the certificate's end, unless `force`.
fn renew_certificate(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let st = node_state(ctx, &node);
    let Some(custom) = &st.custom else {
        return Err(Error::failed(
            "No current (custom) certificate found, please order a new certificate!",
        ));
    };
    let now = ctx.state.clock().now();
    let expires_soon =
        crate::model::node_hw::certs::certificate_info(&custom.pem, "pveproxy-ssl.pem")
            .map_or(true, |i| i.notafter <= now + 30 * 86_400);
    if !expires_soon && !force {
        return Err(Error::invalid(
            "force",
            "Certificate does not expire within the next 30 days, and 'force' is not set.",
        ));
    }
    domains_required(&st.conf)?;
    order_task(ctx, &node, st, Kind::Renew)
}

/// `DELETE /nodes/{node}/certificates/acme/certificate`: `acmerevoke`.
fn revoke_certificate(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let st = node_state(ctx, &node);
    domains_required(&st.conf)?;
    let Some(custom) = st.custom else {
        return Err(Error::failed(format!(
            "unable to open file '/etc/pve/nodes/{node}/pveproxy-ssl.pem' - No such file or directory"
        )));
    };
    let upid = ctx.start_prepared(&node, |c| {
        Ok(order::plan_revoke(c.acme(), &node, &st.conf, &custom.pem))
    })?;
    Ok(json!(upid).into())
}
