//! A node's own settings and services: `config`, `dns`, `hosts`,
//! `time`, `wakeonlan`, `services`, `subscription`, `syslog`, `journal`,
//! `netstat`, `report` and `rrddata` (pve-manager `API2/Nodes.pm`,
//! `API2/NodeConfig.pm`, `API2/Services.pm`, `API2/Subscription.pm`).
//! `rrd` answers the graph's file name and a blank PNG, as the guests'
//! `rrd` do. The APT sources (`apt/repositories`, pve-manager
//! `API2/APT.pm` over proxmox-apt) are a block of their own. The
//! answers' JSON is built in [`view`].

pub mod view;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::node_services::logs::{self, JournalQuery, SyslogQuery};
use crate::model::node_services::stats::{node_report, node_rrd_file, node_rrddata};
use crate::model::node_services::{
    NodeSys, ServiceAction, netstat as netstat_rows, set_subscription_key, store_subscription,
    update_subscription,
};
use crate::model::{Cluster, Error, Result};

/// `node`'s own files and services.
fn sys<'a>(c: &'a Cluster, node: &str) -> Result<std::borrow::Cow<'a, NodeSys>> {
    c.node_services.sys(&c.nodes, c.version, node)
}

/// `node`'s own files and services, to change.
fn sys_mut<'a>(c: &'a mut Cluster, node: &str) -> Result<&'a mut NodeSys> {
    c.node_services.sys_mut(&c.nodes, c.version, node)
}

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/config", get_config),
        put("/nodes/{node}/config", set_options),
        get("/nodes/{node}/dns", dns),
        put("/nodes/{node}/dns", update_dns),
        get("/nodes/{node}/hosts", get_etc_hosts),
        post("/nodes/{node}/hosts", write_etc_hosts),
        get("/nodes/{node}/time", time),
        put("/nodes/{node}/time", set_timezone),
        post("/nodes/{node}/wakeonlan", wakeonlan),
        get("/nodes/{node}/services", services_index),
        get("/nodes/{node}/services/{service}", srvcmdidx),
        get("/nodes/{node}/services/{service}/state", service_state),
        post("/nodes/{node}/services/{service}/start", service_start),
        post("/nodes/{node}/services/{service}/stop", service_stop),
        post("/nodes/{node}/services/{service}/restart", service_restart),
        post("/nodes/{node}/services/{service}/reload", service_reload),
        get("/nodes/{node}/subscription", subscription_get),
        post("/nodes/{node}/subscription", subscription_update),
        put("/nodes/{node}/subscription", subscription_set),
        delete("/nodes/{node}/subscription", subscription_delete),
        get("/nodes/{node}/syslog", syslog),
        get("/nodes/{node}/journal", journal),
        get("/nodes/{node}/netstat", netstat),
        get("/nodes/{node}/report", report),
        get("/nodes/{node}/rrddata", rrddata),
        get("/nodes/{node}/rrd", rrd),
        // APT sources (proxmox-apt).
        get("/nodes/{node}/apt/repositories", repositories),
        post("/nodes/{node}/apt/repositories", change_repository),
        put("/nodes/{node}/apt/repositories", add_repository),
    ]
}

/// The options of `PUT /nodes/{node}/config`.
const CONFIG_OPTIONS: &[&str] = &[
    "acme",
    "acmedomain0",
    "acmedomain1",
    "acmedomain2",
    "acmedomain3",
    "acmedomain4",
    "acmedomain5",
    "ballooning-target",
    "description",
    // 9.2: the node's map location (the schema refuses it before)
    "location",
    "startall-onboot-delay",
    "wakeonlan",
];

/// `GET /nodes/{node}/config`.
fn get_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let property = ctx.params.str("property");
    ctx.with(|c| Ok(view::config(&*sys(c, &node)?, property.as_deref()).into()))
}

/// `PUT /nodes/{node}/config`.
fn set_options(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let mut set = BTreeMap::new();
    for opt in CONFIG_OPTIONS {
        if let Some(v) = ctx.params.get(opt) {
            set.insert((*opt).to_string(), super::params::value_text(v));
        }
    }
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| {
            crate::spec::formats::split_list(&d)
                .into_iter()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        let plugins = c.acme().plugins().load().into_keys().collect();
        sys_mut(c, &node)?.set_config(&set, &delete, digest.as_deref(), &plugins)
    })?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/dns`.
fn dns(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    ctx.with(|c| Ok(view::dns(&*sys(c, &node)?).into()))
}

/// `PUT /nodes/{node}/dns`.
fn update_dns(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let search = ctx.param("search")?;
    let servers = [
        ctx.params.str("dns1"),
        ctx.params.str("dns2"),
        ctx.params.str("dns3"),
    ];
    ctx.with(|c| {
        sys_mut(c, &node)?.set_dns(
            &search,
            [
                servers[0].as_deref(),
                servers[1].as_deref(),
                servers[2].as_deref(),
            ],
        );
        Ok::<_, Error>(())
    })?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/hosts`.
fn get_etc_hosts(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    ctx.with(|c| Ok(view::hosts(&*sys(c, &node)?).into()))
}

/// `POST /nodes/{node}/hosts`.
fn write_etc_hosts(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let data = ctx.param("data")?;
    let digest = ctx.params.str("digest");
    ctx.with(|c| sys_mut(c, &node)?.write_hosts(&data, digest.as_deref()))?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/time`: the emulated clock in the node's zone.
fn time(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now = ctx.now();
    ctx.with(|c| Ok(view::time(&*sys(c, &node)?, now).into()))
}

/// `PUT /nodes/{node}/time`.
fn set_timezone(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let zone = ctx.param("timezone")?;
    ctx.with(|c| sys_mut(c, &node)?.set_timezone(&zone))?;
    Ok(Value::Null.into())
}

/// `POST /nodes/{node}/wakeonlan`: answers the MAC the magic packet is
/// made of; a node that is shut down boots (see `model::power`). Not
/// proxied: the target is usually down.
fn wakeonlan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        let local = c.nodes().local().to_string();
        if node == "localhost" || node == local {
            return Err(Error::failed(format!(
                "'{node}' is local node, cannot wake my self!"
            )));
        }
        if !c.nodes().contains(&node) {
            return Err(Error::failed(format!("no such cluster node '{node}'")));
        }
        let mac = sys(c, &node)?.wakeonlan_mac().ok_or_else(|| {
            Error::failed(format!("No wake on LAN MAC address defined for '{node}'!"))
        })?;
        // The magic packet wakes a node that is shut down.
        c.wake_node(&node, now_ms)?;
        Ok(json!(mac).into())
    })
}

/// `GET /nodes/{node}/services`.
fn services_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    ctx.with(|c| {
        let units = c.node_services.services(&c.nodes, c.version, &node)?;
        Ok(units
            .into_iter()
            .map(|(u, state)| view::service(u, state))
            .collect::<Value>()
            .into())
    })
}

/// `GET /nodes/{node}/services/{service}`.
fn srvcmdidx(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.param("service")?;
    Ok(json!([
        { "subdir": "state" },
        { "subdir": "start" },
        { "subdir": "stop" },
        { "subdir": "restart" },
        { "subdir": "reload" },
    ])
    .into())
}

/// `GET /nodes/{node}/services/{service}/state`.
fn service_state(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let service = ctx.param("service")?;
    ctx.with(|c| {
        let (unit, state) = c
            .node_services
            .service(&c.nodes, c.version, &node, &service)?;
        Ok(view::service(unit, state).into())
    })
}

/// Runs `systemctl <action> <service>` in a task.
fn service_task(ctx: &Ctx<'_>, action: ServiceAction) -> Result<Reply> {
    let node = ctx.node()?;
    let service = ctx.param("service")?;
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms(action.task_kind());
    let upid = ctx.with(|c| {
        let worker = c
            .node_services
            .service_worker(&c.nodes, c.version, &node, &service, action)?;
        Ok::<_, Error>(c.start_task(&node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `POST .../services/{service}/start`.
fn service_start(ctx: &Ctx<'_>) -> Result<Reply> {
    service_task(ctx, ServiceAction::Start)
}

/// `POST .../services/{service}/stop`.
fn service_stop(ctx: &Ctx<'_>) -> Result<Reply> {
    service_task(ctx, ServiceAction::Stop)
}

/// `POST .../services/{service}/restart`.
fn service_restart(ctx: &Ctx<'_>) -> Result<Reply> {
    service_task(ctx, ServiceAction::Restart)
}

/// `POST .../services/{service}/reload`.
fn service_reload(ctx: &Ctx<'_>) -> Result<Reply> {
    service_task(ctx, ServiceAction::Reload)
}

/// `GET /nodes/{node}/subscription`: any user; the key and server id
/// only with Sys.Audit on the node.
fn subscription_get(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let who = ctx.who()?;
    ctx.with(|c| {
        let audit = c
            .access()
            .has_priv(who, &format!("/nodes/{node}"), "Sys.Audit");
        let sockets = c.nodes().get(&node).map_or(1, |n| n.sockets);
        let sys = sys(c, &node)?;
        Ok(view::subscription(sys.subscription(), &node, sockets, audit).into())
    })
}

/// `POST /nodes/{node}/subscription`.
fn subscription_update(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let now = ctx.now();
    ctx.with(|c| {
        update_subscription(
            &mut c.nodes,
            &mut c.node_services,
            c.version,
            &node,
            force,
            now,
        )
    })?;
    Ok(Value::Null.into())
}

/// `PUT /nodes/{node}/subscription`.
fn subscription_set(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let key = ctx.param("key")?;
    let now = ctx.now();
    ctx.with(|c| {
        set_subscription_key(
            &mut c.nodes,
            &mut c.node_services,
            c.version,
            &node,
            &key,
            now,
        )
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /nodes/{node}/subscription`.
fn subscription_delete(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    ctx.with(|c| store_subscription(&mut c.nodes, &mut c.node_services, c.version, &node, None))?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/syslog`: `journalctl -o short` lines, `total` the
/// number selected.
fn syslog(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let start = ctx.params.int("start", Some(0), None)?.unwrap_or(0);
    let limit = ctx.params.int("limit", Some(0), None)?.unwrap_or(0);
    let service = ctx.params.str("service");
    let (since, until) = (ctx.params.str("since"), ctx.params.str("until"));
    let (total, lines) = ctx.with(|c| {
        let zone = sys(c, &node)?.timezone().to_string();
        let bad = |p: &str, v: &str| {
            Error::failed(format!(
                "command 'journalctl -o short --no-pager --{p} {v}' failed: exit code 1"
            ))
        };
        let since = match since.as_deref() {
            Some(s) => Some(logs::parse_local(s, &zone).ok_or_else(|| bad("since", s))?),
            None => None,
        };
        let until = match until.as_deref() {
            Some(s) => Some(logs::parse_local(s, &zone).ok_or_else(|| bad("until", s))?),
            None => None,
        };
        let q = SyslogQuery {
            start: u64::try_from(start).unwrap_or(0),
            limit: u64::try_from(limit).unwrap_or(0),
            since,
            until,
            // `journalctl --unit` names the unit `sshd` stands for.
            unit: service
                .filter(|s| !s.is_empty())
                .map(|s| if s == "sshd" { "ssh".into() } else { s }),
        };
        let journal = c.node_services.journal(&c.nodes, c.version, &node)?;
        Ok::<_, Error>(logs::syslog(&journal, &node, &zone, &q))
    })?;
    Ok(Reply {
        raw: None,
        data: view::syslog(lines),
        total: Some(total),
        attribs: serde_json::Map::new(),
        deferred: None,
        download: None,
    })
}

/// `GET /nodes/{node}/journal`: `mini-journalreader`'s lines between its
/// start and end cursors.
fn journal(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let num = |k: &str| -> Result<Option<u64>> {
        Ok(ctx
            .params
            .int(k, Some(0), None)?
            .and_then(|v| u64::try_from(v).ok()))
    };
    let q = JournalQuery {
        lastentries: num("lastentries")?,
        since: num("since")?
            .filter(|v| *v > 0)
            .and_then(|v| i64::try_from(v).ok()),
        until: num("until")?
            .filter(|v| *v > 0)
            .and_then(|v| i64::try_from(v).ok()),
        startcursor: ctx.params.str("startcursor").filter(|s| !s.is_empty()),
        endcursor: ctx.params.str("endcursor").filter(|s| !s.is_empty()),
        // 9.2's filters (the schema refuses them before).
        priority: ctx
            .params
            .str("priority")
            .and_then(|p| JournalQuery::priority_range(&p)),
        service: ctx.params.str("service"),
        // a few services log under another unit than their name
        unit: ctx.params.str("unit").map(|u| match u.as_str() {
            "postfix" => "postfix@-".to_string(),
            "sshd" => "ssh".to_string(),
            _ => u,
        }),
        kernel: ctx.params.bool("kernel")?.unwrap_or(false),
    };
    let structured = ctx.params.bool("structured")?.unwrap_or(false);
    // only honoured together with `structured`
    let identifiers = structured && ctx.params.bool("identifiers")?.unwrap_or(false);
    let units = structured && ctx.params.bool("units")?.unwrap_or(false);
    ctx.with(|c| {
        let zone = sys(c, &node)?.timezone().to_string();
        let lines = c.node_services.journal(&c.nodes, c.version, &node)?;
        if structured {
            let picked = logs::pick(&lines, &q);
            return Ok(view::journal_structured(&picked, &lines, &node, identifiers, units).into());
        }
        Ok(json!(logs::journal(&lines, &node, &zone, &q)).into())
    })
}

/// `GET /nodes/{node}/netstat`.
fn netstat(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now_ms = ctx.now_ms();
    let now = now_ms.div_euclid(1000);
    ctx.with(|c| {
        // The first device's counters are the guest's `netin`/`netout`.
        let counters = |st: &Value| {
            let num = |v: &Value| v.as_u64().unwrap_or(0);
            (num(&st["netin"]), num(&st["netout"]))
        };
        let rows = netstat_rows(
            &c.nodes,
            &c.guests,
            &node,
            |vm| {
                counters(&crate::api::qemu::status::vm_status(
                    &c.vm_status_reader(),
                    vm,
                    now_ms,
                    false,
                    false,
                ))
            },
            |ct| {
                let f = crate::model::lxc::status::ct_status(
                    ct,
                    &c.nodes,
                    &c.ha,
                    c.version,
                    now.saturating_mul(1000),
                    false,
                )
                .figures;
                (f.netin, f.netout)
            },
        )?;
        Ok(view::netstat(&rows).into())
    })
}

/// `GET /nodes/{node}/report`.
fn report(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now = ctx.now();
    ctx.with(|c| {
        let text = node_report(
            &c.nodes,
            c.version,
            &c.node_services,
            &c.guests,
            &c.storage,
            &node,
            now,
        )?;
        Ok(json!(text).into())
    })
}

/// `GET /nodes/{node}/rrddata`.
fn rrddata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let timeframe = ctx.param("timeframe")?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        let load = crate::model::resources::guest_load(&c.nodes, &c.guests, &node);
        let points = node_rrddata(&c.nodes, c.version, load, &node, &timeframe, now_ms)?;
        Ok(view::rrddata(&points).into())
    })
}

/// `GET /nodes/{node}/rrd`: the node's graph (pve-cluster
/// `create_rrd_graph` of `pve2-node/<node>` on 8.4, `pve-node-9.0/<node>`
/// on 9.x), its file name and a blank PNG.
fn rrd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let ds = ctx.param("ds")?;
    let ids = crate::spec::formats::split_list(&ds);
    let file = ctx.with(|c| node_rrd_file(&c.nodes, c.version, &node, &ids))?;
    super::qemu::rrd_graph(ctx, &file)
}

/// `GET /nodes/{node}/apt/repositories`.
fn repositories(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    ctx.with(|c| {
        let v = c.version();
        Ok(view::apt_repositories(&sys(c, &node)?.apt_sources(v), v).into())
    })
}

/// `POST /nodes/{node}/apt/repositories`: enables or disables one.
fn change_repository(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let path = ctx.param("path")?;
    let index = ctx.params.int("index", None, None)?.unwrap_or_default();
    let enabled = ctx.params.bool("enabled")?;
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        let v = c.version();
        sys_mut(c, &node)?
            .apt_sources_mut(v)
            .change(&path, index, enabled, digest.as_deref())
    })?;
    Ok(Value::Null.into())
}

/// `PUT /nodes/{node}/apt/repositories`: adds a standard repository.
fn add_repository(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let handle = ctx.param("handle")?;
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        let v = c.version();
        sys_mut(c, &node)?
            .apt_sources_mut(v)
            .add(&handle, digest.as_deref(), v)
    })?;
    Ok(Value::Null.into())
}
