//! `/cluster/qemu` (PVE 9.2): the cluster's CPU flags and the custom CPU
//! models of `cpu-models.conf` (pve-manager `API2/Cluster/Qemu.pm`,
//! `Qemu/CPUFlags.pm`, `Qemu/CustomCPUModels.pm`), and what a node's
//! `capabilities/qemu/cpu` and `cpu-flags` show of them (qemu-server
//! `API2/Qemu/CPU.pm`, `CPUFlags.pm`). The schema checks the
//! permissions of the single-model calls (`Mapping.*` on
//! `/mapping/cpu/{cputype}`, with the name as given).

use serde_json::{Map, Value, json};

use super::super::{Ctx, Reply, Route, delete, get, post, put};
use super::view;
use crate::model::node_hw::catalog;
use crate::model::qemu::cpu_models::{self, CpuModel};
use crate::model::{PveVersion, Result};
use crate::spec::formats::split_list;

/// The privileges that let a user see a custom model.
const SEE: &[&str] = &["Mapping.Modify", "Mapping.Use", "Mapping.Audit"];

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/qemu", index),
        get("/cluster/qemu/cpu-flags", cluster_cpu_flags),
        get("/cluster/qemu/custom-cpu-models", list),
        post("/cluster/qemu/custom-cpu-models", create),
        get("/cluster/qemu/custom-cpu-models/{cputype}", info),
        put("/cluster/qemu/custom-cpu-models/{cputype}", update),
        delete("/cluster/qemu/custom-cpu-models/{cputype}", remove),
    ]
}

/// `GET /cluster/qemu`.
fn index(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(json!([{ "name": "cpu-flags" }, { "name": "custom-cpu-models" }]).into())
}

/// The model a call's parameters describe.
fn given(ctx: &Ctx<'_>) -> Result<CpuModel> {
    let number = |name: &str| -> Result<Option<u64>> {
        Ok(ctx
            .params
            .int(name, Some(0), None)?
            .and_then(|n| u64::try_from(n).ok()))
    };
    Ok(CpuModel {
        reported_model: ctx.params.str("reported-model"),
        flags: ctx.params.str("flags"),
        hidden: ctx.params.bool("hidden")?,
        hv_vendor_id: ctx.params.str("hv-vendor-id"),
        phys_bits: ctx.params.str("phys-bits"),
        guest_phys_bits: number("guest-phys-bits")?,
        level: number("level")?,
    })
}

/// `GET /cluster/qemu/custom-cpu-models`: the models the user may see.
fn list(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let out = ctx.with(|c| {
        let digest = c.cpu_models().digest();
        c.cpu_models()
            .iter()
            .filter(|(name, _)| {
                c.access()
                    .has_any(&who, &format!("/mapping/cpu/{name}"), SEE)
            })
            .map(|(name, m)| view::custom_cpu_model(name, m, &digest))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(out).into())
}

/// `POST /cluster/qemu/custom-cpu-models`.
fn create(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = ctx.param("cputype")?;
    let model = given(ctx)?;
    ctx.with(|c| c.cpu_models_mut().create(&name, model))?;
    Ok(Value::Null.into())
}

/// `GET /cluster/qemu/custom-cpu-models/{cputype}`: what
/// `get_custom_model` gives (the properties Perl takes as true), and the
/// digest.
fn info(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = ctx.param("cputype")?;
    ctx.with(|c| {
        let models = c.cpu_models();
        let m = models.info(&name)?;
        let mut out = Map::new();
        out.insert(
            "cputype".into(),
            Value::String(format!("custom-{}", cpu_models::bare(&name))),
        );
        for (k, v) in m.truthy_settings() {
            out.insert(k.into(), view::cpu_setting(v));
        }
        out.insert("digest".into(), Value::String(models.digest()));
        Ok(Reply::from(Value::Object(out)))
    })
}

/// `PUT /cluster/qemu/custom-cpu-models/{cputype}`.
fn update(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = ctx.param("cputype")?;
    let model = given(ctx)?;
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.cpu_models_mut()
            .update(&name, model, &delete, digest.as_deref())
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/qemu/custom-cpu-models/{cputype}`: VMs that name the
/// model keep it in their config (PVE does not look).
fn remove(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = ctx.param("cputype")?;
    ctx.with(|c| c.cpu_models_mut().delete(&name))?;
    Ok(Value::Null.into())
}

/// The custom models a user sees in a node's
/// `capabilities/qemu/cpu`: on 9.2 all with `Sys.Audit` on `/nodes`,
/// else those with a `Mapping.*` privilege on `/mapping/cpu/<name>`;
/// before, all or none by `Sys.Audit` on `/nodes`. A model whose
/// reported model is not of the architecture is left out.
pub fn custom_in_cpu_index(ctx: &Ctx<'_>, arch: &str) -> Result<Vec<Value>> {
    let who = ctx.who()?.clone();
    let v = ctx.state.settings().version;
    Ok(ctx.with(|c| {
        let all = c.access().has_any(&who, "/nodes", &["Sys.Audit"]);
        c.cpu_models()
            .iter()
            .filter(|(name, _)| {
                all || (v == PveVersion::V9_2
                    && c.access()
                        .has_any(&who, &format!("/mapping/cpu/{name}"), SEE))
            })
            .filter_map(|(name, m)| {
                let reported = m
                    .reported_model
                    .as_deref()
                    .unwrap_or(cpu_models::DEFAULT_REPORTED_MODEL);
                catalog::vendor_of(v, arch, reported).map(|vendor| {
                    json!({ "name": format!("custom-{name}"), "custom": 1, "vendor": vendor })
                })
            })
            .collect()
    }))
}

/// `GET /cluster/qemu/cpu-flags`: every flag QEMU understands, with the
/// nodes whose CPU supports it (`nested-virt` first, then the supported
/// ones, then the rest, each by name).
fn cluster_cpu_flags(ctx: &Ctx<'_>) -> Result<Reply> {
    let arch = ctx.params.str("arch").unwrap_or_else(|| "x86_64".into());
    let accel = ctx.params.str("accel").unwrap_or_else(|| "kvm".into());
    let nodes = member_names(ctx);
    Ok(Value::Array(
        catalog::available_cpu_flags(&arch, &accel, false, &nodes)
            .iter()
            .map(view::cpu_flag)
            .collect(),
    )
    .into())
}

/// The cluster's members by name, whose CPUs `supported-on` lists.
pub fn member_names(ctx: &Ctx<'_>) -> Vec<String> {
    ctx.with(|c| c.nodes().members().iter().map(|n| n.name.clone()).collect())
}
