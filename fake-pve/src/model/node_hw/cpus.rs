//! The CPUs of the emulated nodes as qemu-server and QEMU describe them:
//! the models each release's QEMU offers, the CPUID flags QEMU
//! understands and those a VM's `cpu` may set, and which nodes support
//! each flag (qemu-server `CPUConfig.pm`, `CPUFlags.pm`).

use crate::model::PveVersion;

/// The models of [`CPU_MODELS`] that qemu-server 8.3's
/// `$cpu_vendor_list` (PVE 8.4) does not have yet.
const NEW_IN_9: &[&str] = &[
    "Icelake-Server-v7",
    "SapphireRapids-v3",
    "SapphireRapids-v4",
    "GraniteRapids-v2",
    "GraniteRapids-v3",
    "SierraForest",
    "SierraForest-v2",
    "SierraForest-v3",
    "ClearwaterForest",
    "EPYC-v5",
    "EPYC-Rome-v5",
    "EPYC-Milan-v3",
    "EPYC-Genoa-v2",
    "EPYC-Turin",
];

/// The models of [`CPU_MODELS`] and [`CPU_MODELS_AARCH64`] that only
/// PVE 9.2's QEMU 11 offers (its `cpu-models-*.json`, as 9.2's schema
/// lists them in `reported-model`).
const NEW_IN_9_2: &[&str] = &[
    "SapphireRapids-v5",
    "SapphireRapids-v6",
    "GraniteRapids-v4",
    "GraniteRapids-v5",
    "SierraForest-v4",
    "SierraForest-v5",
    "ClearwaterForest-v2",
    "ClearwaterForest-v3",
    "DiamondRapids",
    "cortex-a78ae",
];

/// `$cpu_vendor_list` of qemu-server 9.1 (PVE 9.1), with 9.2's newer
/// models: model and vendor.
const CPU_MODELS: &[(&str, &str)] = &[
    ("486", "GenuineIntel"),
    ("pentium", "GenuineIntel"),
    ("pentium2", "GenuineIntel"),
    ("pentium3", "GenuineIntel"),
    ("coreduo", "GenuineIntel"),
    ("core2duo", "GenuineIntel"),
    ("Conroe", "GenuineIntel"),
    ("Penryn", "GenuineIntel"),
    ("Nehalem", "GenuineIntel"),
    ("Nehalem-IBRS", "GenuineIntel"),
    ("Westmere", "GenuineIntel"),
    ("Westmere-IBRS", "GenuineIntel"),
    ("SandyBridge", "GenuineIntel"),
    ("SandyBridge-IBRS", "GenuineIntel"),
    ("IvyBridge", "GenuineIntel"),
    ("IvyBridge-IBRS", "GenuineIntel"),
    ("Haswell", "GenuineIntel"),
    ("Haswell-IBRS", "GenuineIntel"),
    ("Haswell-noTSX", "GenuineIntel"),
    ("Haswell-noTSX-IBRS", "GenuineIntel"),
    ("Broadwell", "GenuineIntel"),
    ("Broadwell-IBRS", "GenuineIntel"),
    ("Broadwell-noTSX", "GenuineIntel"),
    ("Broadwell-noTSX-IBRS", "GenuineIntel"),
    ("Skylake-Client", "GenuineIntel"),
    ("Skylake-Client-IBRS", "GenuineIntel"),
    ("Skylake-Client-noTSX-IBRS", "GenuineIntel"),
    ("Skylake-Client-v4", "GenuineIntel"),
    ("Skylake-Server", "GenuineIntel"),
    ("Skylake-Server-IBRS", "GenuineIntel"),
    ("Skylake-Server-noTSX-IBRS", "GenuineIntel"),
    ("Skylake-Server-v4", "GenuineIntel"),
    ("Skylake-Server-v5", "GenuineIntel"),
    ("Cascadelake-Server", "GenuineIntel"),
    ("Cascadelake-Server-v2", "GenuineIntel"),
    ("Cascadelake-Server-noTSX", "GenuineIntel"),
    ("Cascadelake-Server-v4", "GenuineIntel"),
    ("Cascadelake-Server-v5", "GenuineIntel"),
    ("Cooperlake", "GenuineIntel"),
    ("Cooperlake-v2", "GenuineIntel"),
    ("KnightsMill", "GenuineIntel"),
    ("Icelake-Client", "GenuineIntel"),
    ("Icelake-Client-noTSX", "GenuineIntel"),
    ("Icelake-Server", "GenuineIntel"),
    ("Icelake-Server-noTSX", "GenuineIntel"),
    ("Icelake-Server-v3", "GenuineIntel"),
    ("Icelake-Server-v4", "GenuineIntel"),
    ("Icelake-Server-v5", "GenuineIntel"),
    ("Icelake-Server-v6", "GenuineIntel"),
    ("Icelake-Server-v7", "GenuineIntel"),
    ("SapphireRapids", "GenuineIntel"),
    ("SapphireRapids-v2", "GenuineIntel"),
    ("SapphireRapids-v3", "GenuineIntel"),
    ("SapphireRapids-v4", "GenuineIntel"),
    ("GraniteRapids", "GenuineIntel"),
    ("GraniteRapids-v2", "GenuineIntel"),
    ("GraniteRapids-v3", "GenuineIntel"),
    ("SierraForest", "GenuineIntel"),
    ("SierraForest-v2", "GenuineIntel"),
    ("SierraForest-v3", "GenuineIntel"),
    ("ClearwaterForest", "GenuineIntel"),
    ("SapphireRapids-v5", "GenuineIntel"),
    ("SapphireRapids-v6", "GenuineIntel"),
    ("GraniteRapids-v4", "GenuineIntel"),
    ("GraniteRapids-v5", "GenuineIntel"),
    ("SierraForest-v4", "GenuineIntel"),
    ("SierraForest-v5", "GenuineIntel"),
    ("ClearwaterForest-v2", "GenuineIntel"),
    ("ClearwaterForest-v3", "GenuineIntel"),
    ("DiamondRapids", "GenuineIntel"),
    ("athlon", "AuthenticAMD"),
    ("phenom", "AuthenticAMD"),
    ("Opteron_G1", "AuthenticAMD"),
    ("Opteron_G2", "AuthenticAMD"),
    ("Opteron_G3", "AuthenticAMD"),
    ("Opteron_G4", "AuthenticAMD"),
    ("Opteron_G5", "AuthenticAMD"),
    ("EPYC", "AuthenticAMD"),
    ("EPYC-IBPB", "AuthenticAMD"),
    ("EPYC-v3", "AuthenticAMD"),
    ("EPYC-v4", "AuthenticAMD"),
    ("EPYC-v5", "AuthenticAMD"),
    ("EPYC-Rome", "AuthenticAMD"),
    ("EPYC-Rome-v2", "AuthenticAMD"),
    ("EPYC-Rome-v3", "AuthenticAMD"),
    ("EPYC-Rome-v4", "AuthenticAMD"),
    ("EPYC-Rome-v5", "AuthenticAMD"),
    ("EPYC-Milan", "AuthenticAMD"),
    ("EPYC-Milan-v2", "AuthenticAMD"),
    ("EPYC-Milan-v3", "AuthenticAMD"),
    ("EPYC-Genoa", "AuthenticAMD"),
    ("EPYC-Genoa-v2", "AuthenticAMD"),
    ("EPYC-Turin", "AuthenticAMD"),
    ("host", "default"),
    ("kvm32", "default"),
    ("kvm64", "default"),
    ("qemu32", "default"),
    ("qemu64", "default"),
    ("max", "default"),
];

/// qemu-server's aarch64 models (the release's `cpu-models-aarch64.json`
/// defaults); `host` only exists for the host's own architecture.
const CPU_MODELS_AARCH64: &[(&str, &str)] = &[
    ("a64fx", "ARM"),
    ("cortex-a35", "ARM"),
    ("cortex-a53", "ARM"),
    ("cortex-a55", "ARM"),
    ("cortex-a57", "ARM"),
    ("cortex-a710", "ARM"),
    ("cortex-a72", "ARM"),
    ("cortex-a76", "ARM"),
    ("cortex-a78ae", "ARM"),
    ("neoverse-n1", "ARM"),
    ("neoverse-n2", "ARM"),
    ("neoverse-v1", "ARM"),
    ("max", "default"),
];

/// qemu-server's built-in abstract x86-64 models (`$builtin_models`); all
/// report `qemu64`, whose vendor is the host's (`default`).
const BUILTIN_X86: &[&str] = &["x86-64-v2", "x86-64-v2-AES", "x86-64-v3", "x86-64-v4"];

/// Whether the release's QEMU offers the model.
fn offered(version: PveVersion, name: &str) -> bool {
    (version.is_v9() || !NEW_IN_9.contains(&name))
        && (version == PveVersion::V9_2 || !NEW_IN_9_2.contains(&name))
}

/// `GET /nodes/{node}/capabilities/qemu/cpu`: the default models, then
/// the built-in abstract ones (`abstract: 1`), sorted by name (PVE lists
/// them in hash order). The custom models are added by the caller.
pub fn cpu_models(version: PveVersion, arch: &str) -> Vec<CpuModel> {
    let model = |(name, vendor): &(&'static str, &'static str)| CpuModel {
        name,
        vendor,
        builtin: false,
    };
    let mut out: Vec<CpuModel> = Vec::new();
    if arch == "aarch64" {
        out.extend(
            CPU_MODELS_AARCH64
                .iter()
                .filter(|(name, _)| offered(version, name))
                .map(model),
        );
    } else {
        out.extend(
            CPU_MODELS
                .iter()
                .filter(|(name, _)| offered(version, name))
                .map(model),
        );
        out.extend(BUILTIN_X86.iter().map(|name| CpuModel {
            name,
            vendor: "default",
            builtin: true,
        }));
    }
    out.sort_by(|a, b| a.name.cmp(b.name));
    out
}

/// Every model a VM's `cpu` may name on the release (`get_all_cpu_models`
/// and the built-in ones: both architectures, `host` included).
pub fn all_cpu_model_names(version: PveVersion) -> Vec<String> {
    CPU_MODELS
        .iter()
        .chain(CPU_MODELS_AARCH64)
        .map(|(name, _)| *name)
        .chain(BUILTIN_X86.iter().copied())
        .filter(|name| offered(version, name))
        .map(str::to_string)
        .collect()
}

/// The vendor a model reports (`get_all_cpu_models`), for a custom
/// model's `reported-model`; `None` for a model of another architecture.
pub fn vendor_of(version: PveVersion, arch: &str, model: &str) -> Option<&'static str> {
    let list = if arch == "aarch64" {
        CPU_MODELS_AARCH64
    } else {
        CPU_MODELS
    };
    list.iter()
        .find(|(name, _)| *name == model && offered(version, name))
        .map(|(_, vendor)| *vendor)
}

/// A CPU model a node's QEMU offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuModel {
    /// The model (`x86-64-v2-AES`, `Skylake-Server`).
    pub name: &'static str,
    /// Its vendor (`GenuineIntel`, `AuthenticAMD`, `default`).
    pub vendor: &'static str,
    /// One of qemu-server's built-in abstract models (`abstract: 1`).
    pub builtin: bool,
}

/// The flags of a node's CPU as `/proc/cpuinfo` shows them (and
/// `/nodes/{node}/status` in `cpuinfo.flags`).
pub const HOST_CPU_FLAGS: &str = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl cpuid pni pclmulqdq vmx ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm abm avx2 bmi1 bmi2";

/// The CPUID flags QEMU understands on x86_64 (its `-cpu help`, which
/// pve-qemu-kvm ships as `recognized-CPUID-flags-x86_64`), by feature
/// word.
const UNDERSTOOD_X86: &[&str] = &[
    // CPUID 1 EDX and ECX
    "fpu",
    "vme",
    "de",
    "pse",
    "tsc",
    "msr",
    "pae",
    "mce",
    "cx8",
    "apic",
    "sep",
    "mtrr",
    "pge",
    "mca",
    "cmov",
    "pat",
    "pse36",
    "pn",
    "clflush",
    "ds",
    "acpi",
    "mmx",
    "fxsr",
    "sse",
    "sse2",
    "ss",
    "ht",
    "tm",
    "ia64",
    "pbe",
    "pni",
    "pclmulqdq",
    "dtes64",
    "monitor",
    "ds-cpl",
    "vmx",
    "smx",
    "est",
    "tm2",
    "ssse3",
    "cid",
    "fma",
    "cx16",
    "xtpr",
    "pdcm",
    "pcid",
    "dca",
    "sse4.1",
    "sse4.2",
    "x2apic",
    "movbe",
    "popcnt",
    "tsc-deadline",
    "aes",
    "xsave",
    "avx",
    "f16c",
    "rdrand",
    "hypervisor",
    // CPUID 0x80000001 EDX and ECX
    "syscall",
    "nx",
    "mmxext",
    "fxsr-opt",
    "pdpe1gb",
    "rdtscp",
    "lm",
    "3dnowext",
    "3dnow",
    "lahf-lm",
    "cmp-legacy",
    "svm",
    "extapic",
    "cr8legacy",
    "abm",
    "sse4a",
    "misalignsse",
    "3dnowprefetch",
    "osvw",
    "ibs",
    "xop",
    "skinit",
    "wdt",
    "lwp",
    "fma4",
    "tce",
    "nodeid-msr",
    "tbm",
    "topoext",
    "perfctr-core",
    "perfctr-nb",
    // KVM paravirtual features
    "kvmclock",
    "kvm-nopiodelay",
    "kvm-mmu",
    "kvm-asyncpf",
    "kvm-steal-time",
    "kvm-pv-eoi",
    "kvm-pv-unhalt",
    "kvm-pv-tlb-flush",
    "kvm-pv-ipi",
    "kvm-poll-control",
    "kvm-pv-sched-yield",
    "kvm-asyncpf-int",
    "kvm-msi-ext-dest-id",
    "kvmclock-stable-bit",
    // CPUID 7 EBX, ECX and EDX
    "fsgsbase",
    "tsc-adjust",
    "sgx",
    "bmi1",
    "hle",
    "avx2",
    "smep",
    "bmi2",
    "erms",
    "invpcid",
    "rtm",
    "mpx",
    "avx512f",
    "avx512dq",
    "rdseed",
    "adx",
    "smap",
    "avx512ifma",
    "clflushopt",
    "clwb",
    "intel-pt",
    "avx512pf",
    "avx512er",
    "avx512cd",
    "sha-ni",
    "avx512bw",
    "avx512vl",
    "avx512vbmi",
    "umip",
    "pku",
    "waitpkg",
    "avx512vbmi2",
    "gfni",
    "vaes",
    "vpclmulqdq",
    "avx512vnni",
    "avx512bitalg",
    "avx512-vpopcntdq",
    "la57",
    "rdpid",
    "bus-lock-detect",
    "cldemote",
    "movdiri",
    "movdir64b",
    "sgxlc",
    "pks",
    "avx512-4vnniw",
    "avx512-4fmaps",
    "fsrm",
    "avx512-vp2intersect",
    "md-clear",
    "serialize",
    "tsx-ldtrk",
    "arch-lbr",
    "amx-bf16",
    "avx512-fp16",
    "amx-tile",
    "amx-int8",
    "spec-ctrl",
    "stibp",
    "flush-l1d",
    "arch-capabilities",
    "core-capability",
    "ssbd",
    // CPUID 0x80000008 EBX
    "clzero",
    "xsaveerptr",
    "wbnoinvd",
    "ibpb",
    "ibrs",
    "amd-stibp",
    "stibp-always-on",
    "amd-ssbd",
    "virt-ssbd",
    "amd-no-ssb",
    "amd-psfd",
    // XSAVE, thermal and SVM features
    "xsaveopt",
    "xsavec",
    "xgetbv1",
    "xsaves",
    "xfd",
    "arat",
    "npt",
    "lbrv",
    "svm-lock",
    "nrip-save",
    "tsc-scale",
    "vmcb-clean",
    "flushbyasid",
    "decodeassists",
    "pause-filter",
    "pfthreshold",
    "avic",
    "v-vmsave-vmload",
    "vgif",
    "vnmi",
];

/// QEMU's names for the spellings `/proc/cpuinfo` uses.
fn qemu_flag_name(flag: &str) -> String {
    match flag {
        "sse4_1" => "sse4.1".into(),
        "sse4_2" => "sse4.2".into(),
        "lahf_lm" => "lahf-lm".into(),
        "tsc_adjust" => "tsc-adjust".into(),
        "sha_ni" => "sha-ni".into(),
        "tsc_deadline_timer" => "tsc-deadline".into(),
        other => other.replace('_', "-"),
    }
}

/// A flag of `GET /cluster/qemu/cpu-flags` or (9.2) of a node's
/// `capabilities/qemu/cpu-flags`, with the nodes that support it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableFlag {
    /// The flag (`aes`, `nested-virt`).
    pub name: &'static str,
    /// What it does, for the VM-specific ones (and the raw `svm`/`vmx`).
    pub description: Option<&'static str>,
    /// The nodes whose CPU supports it with the acceleration asked for.
    pub supported_on: Vec<String>,
}

/// `query_available_cpu_flags`: the VM-specific flags (or, cluster-wide,
/// every flag QEMU understands) with the nodes whose CPU supports each
/// (every node has the CPU of [`HOST_CPU_FLAGS`]; TCG offers no
/// virtualization extensions, so no node supports `nested-virt` there).
/// `nested-virt` comes first, then the supported flags, then the rest,
/// each by name; none on aarch64.
pub fn available_cpu_flags(
    arch: &str,
    accel: &str,
    vm_specific: bool,
    nodes: &[String],
) -> Vec<AvailableFlag> {
    if arch == "aarch64" {
        return Vec::new();
    }
    let described = cpu_flags(arch);
    let host: Vec<String> = HOST_CPU_FLAGS
        .split(' ')
        .map(qemu_flag_name)
        .filter(|f| accel == "kvm" || !matches!(f.as_str(), "vmx" | "svm"))
        .collect();
    let supports = |name: &str| match name {
        "nested-virt" => host.iter().any(|f| f == "vmx" || f == "svm"),
        _ => host.iter().any(|f| f == name),
    };
    let names: Vec<&'static str> = if vm_specific {
        described.iter().map(|(n, _)| *n).collect()
    } else {
        let mut all = UNDERSTOOD_X86.to_vec();
        all.push("nested-virt");
        all
    };
    let raw = "Raw nested-virtualization flag. Prefer the 'nested-virt' shorthand for portable VM configs - it resolves to svm or vmx based on the host CPU.";
    let mut out: Vec<AvailableFlag> = names
        .into_iter()
        .map(|name| AvailableFlag {
            name,
            description: described
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, d)| *d)
                .or((!vm_specific && matches!(name, "svm" | "vmx")).then_some(raw)),
            supported_on: if supports(name) {
                nodes.to_vec()
            } else {
                Vec::new()
            },
        })
        .collect();
    out.sort_by(|a, b| {
        (a.name != "nested-virt")
            .cmp(&(b.name != "nested-virt"))
            .then(a.supported_on.is_empty().cmp(&b.supported_on.is_empty()))
            .then(a.name.cmp(b.name))
    });
    out
}

/// `GET /nodes/{node}/capabilities/qemu/cpu-flags` (9.x): the flags the
/// `flags` option of a VM's `cpu` takes, with their descriptions.
pub fn cpu_flags(arch: &str) -> &'static [(&'static str, &'static str)] {
    if arch == "aarch64" {
        return &[];
    }
    &[
        (
            "nested-virt",
            "Controls nested virtualization, namely 'svm' for AMD CPUs and 'vmx' for Intel CPUs. Live migration still only works if it's the same flag on both sides. Use a CPU model similar to the host, with the same vendor, not x86-64-vX!",
        ),
        (
            "md-clear",
            "Required to let the guest OS know if MDS is mitigated correctly.",
        ),
        (
            "pcid",
            "Meltdown fix cost reduction on Westmere, Sandy-, and IvyBridge Intel CPUs.",
        ),
        (
            "spec-ctrl",
            "Allows improved Spectre mitigation with Intel CPUs.",
        ),
        (
            "ssbd",
            "Protection for 'Speculative Store Bypass' for Intel models.",
        ),
        ("ibpb", "Allows improved Spectre mitigation with AMD CPUs."),
        (
            "virt-ssbd",
            "Basis for 'Speculative Store Bypass' protection for AMD models.",
        ),
        (
            "amd-ssbd",
            "Improves Spectre mitigation performance with AMD CPUs, best used with 'virt-ssbd'.",
        ),
        (
            "amd-no-ssb",
            "Notifies guest OS that host is not vulnerable for Spectre on AMD CPUs.",
        ),
        (
            "pdpe1gb",
            "Allow guest OS to use 1GB size pages, if host HW supports it.",
        ),
        (
            "hv-tlbflush",
            "Improve performance in overcommitted Windows guests. May lead to guest bluescreens on old CPUs.",
        ),
        (
            "hv-evmcs",
            "Improve performance for nested virtualization. Only supported on Intel CPUs.",
        ),
        ("aes", "Activate AES instruction set for HW acceleration."),
    ]
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn nodes() -> Vec<String> {
        vec!["pve1".into(), "pve2".into()]
    }

    #[rstest]
    #[case(true, "kvm", 13, true)]
    #[case(false, "kvm", 200, true)]
    #[case(true, "tcg", 13, false)]
    fn flags_are_ordered_and_supported_as_qemu_server_lists_them(
        #[case] vm_specific: bool,
        #[case] accel: &str,
        #[case] count: usize,
        #[case] nested: bool,
    ) {
        let flags = available_cpu_flags("x86_64", accel, vm_specific, &nodes());
        assert_eq!(flags.len(), count);
        assert_eq!(flags[0].name, "nested-virt");
        assert_eq!(flags[0].supported_on.is_empty(), !nested);
        let rest = &flags[1..];
        let split = rest
            .iter()
            .position(|f| f.supported_on.is_empty())
            .unwrap_or(rest.len());
        assert!(rest[..split].iter().all(|f| f.supported_on == nodes()));
        assert!(rest[split..].iter().all(|f| f.supported_on.is_empty()));
        assert!(rest[..split].windows(2).all(|w| w[0].name < w[1].name));
        assert!(rest[split..].windows(2).all(|w| w[0].name < w[1].name));
        let aes = flags.iter().find(|f| f.name == "aes").expect("aes");
        assert_eq!(aes.supported_on, nodes());
        assert!(available_cpu_flags("aarch64", accel, vm_specific, &nodes()).is_empty());
    }

    #[test]
    fn the_raw_virtualization_flags_point_to_nested_virt_cluster_wide() {
        let flags = available_cpu_flags("x86_64", "kvm", false, &nodes());
        let vmx = flags.iter().find(|f| f.name == "vmx").expect("vmx");
        assert!(vmx.description.is_some_and(|d| d.contains("'nested-virt'")));
        let sse = flags.iter().find(|f| f.name == "sse4.1").expect("sse4.1");
        assert_eq!(sse.supported_on, nodes(), "/proc's sse4_1 is QEMU's sse4.1");
    }

    #[rstest]
    #[case(PveVersion::V8_4, "EPYC-Turin", false)]
    #[case(PveVersion::V9_1, "EPYC-Turin", true)]
    #[case(PveVersion::V9_1, "DiamondRapids", false)]
    #[case(PveVersion::V9_2, "DiamondRapids", true)]
    #[case(PveVersion::V9_2, "cortex-a78ae", true)]
    #[case(PveVersion::V9_2, "x86-64-v3", true)]
    fn the_models_a_vm_may_name_follow_the_release(
        #[case] v: PveVersion,
        #[case] model: &str,
        #[case] known: bool,
    ) {
        assert_eq!(all_cpu_model_names(v).iter().any(|m| m == model), known);
    }
}
