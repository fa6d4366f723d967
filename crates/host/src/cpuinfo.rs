//! `/proc/cpuinfo`: each CPU's model, and the micro-architecture name schedlab's costs know
//! it by (`platform/costs.rs`, `work_per_cycle`).

use std::collections::BTreeMap;

/// What `/proc/cpuinfo` says of one CPU.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CpuModel {
    pub vendor: String,
    pub model_name: String,
    /// x86 `cpu family` and `model`.
    pub family: Option<u32>,
    pub model: Option<u32>,
    /// x86 `cpu MHz`.
    pub mhz: Option<f64>,
    /// Arm `CPU implementer` and `CPU part`.
    pub implementer: Option<u32>,
    pub part: Option<u32>,
}

/// The blocks of `/proc/cpuinfo` by `processor` number.
pub fn parse(text: &str) -> BTreeMap<usize, CpuModel> {
    let mut out = BTreeMap::new();
    let mut cpu: Option<usize> = None;
    let mut m = CpuModel::default();
    let number = |v: &str| match v.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    };
    for line in text.lines().chain(std::iter::once("")) {
        let Some((k, v)) = line.split_once(':') else {
            if line.trim().is_empty() {
                if let Some(c) = cpu.take() {
                    out.insert(c, std::mem::take(&mut m));
                }
            }
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => {
                if let Some(c) = cpu.take() {
                    out.insert(c, std::mem::take(&mut m));
                }
                cpu = v.parse().ok();
            }
            "vendor_id" => m.vendor = v.to_string(),
            "model name" => m.model_name = v.to_string(),
            "cpu family" => m.family = number(v),
            "model" => m.model = number(v),
            "cpu MHz" => m.mhz = v.parse().ok(),
            "CPU implementer" => m.implementer = number(v),
            "CPU part" => m.part = number(v),
            _ => {}
        }
    }
    out
}

/// The name `work_per_cycle` knows a CPU by, and what the CPU is.
#[derive(Debug, Clone, PartialEq)]
pub struct Uarch {
    /// A name of `platform/costs.rs`'s `work_per_cycle` table.
    pub known: &'static str,
    /// The core it is (`Zen 4`), and `exact` when that is the known name's own core.
    pub core: String,
    pub exact: bool,
}

impl CpuModel {
    /// How the CPU reads in a comment: `AMD EPYC 7713 (family 0x19 model 0x1)`.
    pub fn describe(&self) -> String {
        let core = self.uarch().map(|u| u.core);
        let name = match (self.model_name.as_str(), &core) {
            ("", Some(core)) => core.as_str(),
            ("", None) => "an unnamed CPU",
            (name, _) => name,
        };
        match (self.family, self.model, self.implementer, self.part) {
            (Some(f), Some(m), _, _) => format!("{name} (family {f:#x} model {m:#x})"),
            (_, _, Some(i), Some(p)) => format!("{name} (implementer {i:#x} part {p:#x})"),
            _ => name.to_string(),
        }
    }

    /// The micro-architecture; `None` when nothing identifies it.
    pub fn uarch(&self) -> Option<Uarch> {
        let (known, core, exact): (&'static str, &str, bool) = match self.vendor.as_str() {
            "GenuineIntel" => match (self.family?, self.model?) {
                (6, 0x2a | 0x2d) => ("sandybridge", "Sandy Bridge", true),
                (6, 0x3a | 0x3e) => ("ivybridge", "Ivy Bridge", true),
                (6, 0x3c | 0x3f | 0x45 | 0x46) => ("haswell", "Haswell", true),
                (6, 0x3d | 0x47 | 0x4f | 0x56) => ("broadwell", "Broadwell", true),
                (6, 0x4e | 0x5e | 0x55 | 0x8e | 0x9e | 0xa5 | 0xa6) => (
                    "skylake",
                    "Skylake (or a Skylake-based Kaby/Coffee/Comet/Cascade Lake)",
                    true,
                ),
                (6, 0x66 | 0x6a | 0x6c | 0x7d | 0x7e) => ("skylake", "Ice Lake", false),
                (6, 0x8c | 0x8d) => ("skylake", "Tiger Lake", false),
                (6, 0xa7) => ("skylake", "Rocket Lake", false),
                (6, 0x8f | 0xcf) => ("skylake", "Sapphire/Emerald Rapids", false),
                (6, 0x97 | 0x9a | 0xb7 | 0xba | 0xbf) => ("skylake", "Alder/Raptor Lake", false),
                (6, 0xaa | 0xac | 0xad | 0xae) => ("skylake", "Meteor Lake/Granite Rapids", false),
                _ => ("skylake", "an Intel core not in schedlab's table", false),
            },
            "AuthenticAMD" | "HygonGenuine" => match (self.family?, self.model?) {
                (0x17, m) if m < 0x30 => ("zen2", "Zen/Zen+", false),
                (0x17, _) => ("zen2", "Zen 2", true),
                (0x19, m) if m < 0x10 || (0x20..0x60).contains(&m) => ("zen3", "Zen 3", true),
                (0x19, _) => ("zen3", "Zen 4", false),
                (0x1a, _) => ("zen3", "Zen 5", false),
                _ => ("zen2", "an AMD core not in schedlab's table", false),
            },
            _ => match (self.implementer?, self.part?) {
                (0x41, 0xd03) => ("cortex-a53", "Cortex-A53", true),
                (0x41, 0xd04) => ("cortex-a53", "Cortex-A35", false),
                (0x41, 0xd05) => ("cortex-a55", "Cortex-A55", true),
                (0x41, 0xd46) => ("cortex-a55", "Cortex-A510", false),
                (0x41, 0xd07) => ("cortex-a57", "Cortex-A57", true),
                (0x41, 0xd08) => ("cortex-a72", "Cortex-A72", true),
                (0x41, 0xd09) => ("cortex-a72", "Cortex-A73", false),
                (0x41, 0xd0a) => ("cortex-a75", "Cortex-A75", true),
                (0x41, 0xd0b | 0xd0d | 0xd41 | 0xd44 | 0xd47 | 0xd48 | 0xd4d | 0xd4e) => {
                    ("cortex-a75", "a Cortex-A76 or later big core", false)
                }
                (0x41, 0xd0c | 0xd40 | 0xd49 | 0xd4f) => ("cortex-a75", "a Neoverse core", false),
                (0x51, 0x802) => ("kryo385-gold", "Kryo 385 Gold", true),
                (0x51, 0x803) => ("kryo385-silver", "Kryo 385 Silver", true),
                (0x51, 0x804) => ("cortex-a75", "Kryo 485 Gold (Cortex-A76)", false),
                (0x51, 0x805) => ("cortex-a55", "Kryo 485 Silver (Cortex-A55)", false),
                _ => return None,
            },
        };
        Some(Uarch {
            known,
            core: core.to_string(),
            exact,
        })
    }

    /// The clock from `cpu MHz`, else from a model name's `@ 2.60GHz`, in kHz.
    pub fn khz(&self) -> Option<(u32, &'static str)> {
        if let Some(mhz) = self.mhz.filter(|m| *m > 0.0 && *m < 1e6) {
            return Some(((mhz * 1000.0).round() as u32, "cpu MHz"));
        }
        let (_, at) = self.model_name.rsplit_once('@')?;
        let ghz: f64 = at.trim().strip_suffix("GHz")?.trim().parse().ok()?;
        (ghz > 0.0 && ghz < 1000.0).then(|| ((ghz * 1e6).round() as u32, "model name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7713 64-Core Processor\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7713 64-Core Processor\ncpu MHz\t\t: 1500.000\n";

    #[test]
    fn x86_blocks_and_names() {
        let cpus = parse(X86);
        assert_eq!(cpus.len(), 2);
        let m = &cpus[&0];
        assert_eq!((m.family, m.model), (Some(25), Some(1)));
        assert_eq!(m.khz(), Some((2_000_000, "cpu MHz")));
        let u = m.uarch().unwrap();
        assert_eq!((u.known, u.exact), ("zen3", true));
        let genoa = CpuModel {
            model: Some(0x11),
            ..m.clone()
        };
        assert_eq!(genoa.uarch().unwrap().core, "Zen 4");
    }

    #[test]
    fn arm_parts() {
        let text = "processor\t: 0\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd03\n\nprocessor\t: 4\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n";
        let cpus = parse(text);
        assert_eq!(cpus[&0].uarch().unwrap().known, "cortex-a53");
        assert_eq!(cpus[&4].uarch().unwrap().known, "cortex-a72");
        assert_eq!(cpus[&0].khz(), None);
    }

    #[test]
    fn a_clock_in_the_model_name() {
        let m = CpuModel {
            model_name: "Intel(R) Core(TM) i7-2600K CPU @ 3.40GHz".into(),
            ..CpuModel::default()
        };
        assert_eq!(m.khz(), Some((3_400_000, "model name")));
    }
}
