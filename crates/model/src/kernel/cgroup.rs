//! The cgroup v2 cpu controller's uclamp files (kernel/sched/core.c, CONFIG_UCLAMP_TASK_GROUP):
//! a hierarchy of task groups, `cpu.uclamp.min` / `cpu.uclamp.max` written as percentages
//! and read back as the kernel prints them, and the effective clamps each group passes down
//! (`cpu_util_update_eff`). The root group's clamps follow the uclamp sysctls. The fair
//! class's files, `cpu.weight` and `cpu.latency.nice` (seed 002), are parsed here and applied
//! to the fair class's groups (`fair/group.rs`).

use super::fair::{MAX_LATENCY_NICE, MIN_LATENCY_NICE};
use super::sched::Errno;
use crate::platform::SCHED_CAPACITY_SCALE;

/// `UCLAMP_PERCENT_SCALE`: percentages are kept in hundredths.
const PERCENT_SCALE: u64 = 100 * 100;

/// The root task group.
pub const ROOT: usize = 0;

#[derive(Debug, Clone)]
struct TaskGroup {
    path: String,
    parent: Option<usize>,
    /// `tg->uclamp_req[]`: the requested clamps (capacity scale).
    req: [u32; 2],
    /// `tg->uclamp_pct[]`: what was written, in hundredths of a percent, for reading back.
    pct: [u64; 2],
    /// `tg->uclamp[]`: the effective clamps.
    eff: [u32; 2],
}

/// All task groups; index 0 is the root.
#[derive(Debug, Clone)]
pub struct Cgroups {
    groups: Vec<TaskGroup>,
    /// Switch `cgroup-online-no-eff-update`: before "sched/uclamp: Fix a bug in propagating
    /// uclamp value in new cgroups" (v5.6) a new group started with a copy of its parent's
    /// effective clamps and kept them until one of its own files was written (seed 003).
    no_eff_update_on_online: bool,
}

/// `capacity_from_percent()` with `cgroup_parse_float(buf, 2)`: "max" is 100%; otherwise an
/// integer, optionally followed by a point and decimals (rounded to two; what follows the
/// number is ignored, as `sscanf` ignores it). A negative value is out of range once cast to
/// unsigned.
fn parse_percent(s: &str) -> Result<u64, Errno> {
    let s = s.trim();
    if s == "max" {
        return Ok(PERCENT_SCALE);
    }
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let n = digits(rest);
    if n == 0 {
        return Err(Errno::EINVAL);
    }
    let whole: u64 = rest[..n].parse().map_err(|_| Errno::ERANGE)?;
    let mut hundredths = 0u64;
    if let Some(frac) = rest[n..].strip_prefix('.') {
        let f = &frac[..digits(frac)];
        if !f.is_empty() {
            // Round the decimals to two (DIV_ROUND_CLOSEST of the extra digits).
            let keep: u64 = format!("{:0<2}", &f[..f.len().min(2)])
                .parse()
                .map_err(|_| Errno::EINVAL)?;
            let round_up = f.len() > 2 && f.as_bytes()[2] >= b'5';
            hundredths = keep + u64::from(round_up);
        }
    }
    let pct = whole
        .checked_mul(100)
        .and_then(|w| w.checked_add(hundredths))
        .ok_or(Errno::ERANGE)?;
    if neg && pct > 0 || pct > PERCENT_SCALE {
        return Err(Errno::ERANGE);
    }
    Ok(pct)
}

/// `CGROUP_WEIGHT_MIN`, `CGROUP_WEIGHT_DFL`, `CGROUP_WEIGHT_MAX`.
pub const CGROUP_WEIGHT_MIN: u64 = 1;
pub const CGROUP_WEIGHT_DFL: u64 = 100;
pub const CGROUP_WEIGHT_MAX: u64 = 10_000;

/// `cpu_weight_write_u64()`: a weight in 1..=10000 (ERANGE outside; EINVAL if not an
/// unsigned integer) as shares, `DIV_ROUND_CLOSEST(weight × 1024, 100)`.
pub fn weight_to_shares(value: &str) -> Result<u64, Errno> {
    let w: u64 = value.trim().parse().map_err(|_| Errno::EINVAL)?;
    if !(CGROUP_WEIGHT_MIN..=CGROUP_WEIGHT_MAX).contains(&w) {
        return Err(Errno::ERANGE);
    }
    Ok((w * 1024 + CGROUP_WEIGHT_DFL / 2) / CGROUP_WEIGHT_DFL)
}

/// `cpu_latency_nice_write_s64()` (seed 002, patch 5): -20..=19, ERANGE outside; EINVAL if
/// not an integer.
pub fn parse_latency_nice(value: &str) -> Result<i32, Errno> {
    let n: i64 = value.trim().parse().map_err(|_| Errno::EINVAL)?;
    match i32::try_from(n) {
        Ok(n) if (MIN_LATENCY_NICE..=MAX_LATENCY_NICE).contains(&n) => Ok(n),
        _ => Err(Errno::ERANGE),
    }
}

impl Cgroups {
    /// The root group and the groups at `paths` ("/a/b"), with their ancestors. The root's
    /// clamps are the sysctls' `root` (min, max).
    pub fn new(paths: &[String], root: [u32; 2], no_eff_update_on_online: bool) -> Cgroups {
        let mut cg = Cgroups {
            groups: vec![TaskGroup {
                path: "/".into(),
                parent: None,
                req: root,
                pct: [0, PERCENT_SCALE],
                eff: root,
            }],
            no_eff_update_on_online,
        };
        for p in paths {
            cg.create(p);
        }
        cg
    }

    /// The group at `path`, created (with its ancestors) if needed: `cpu_cgroup_css_alloc`
    /// then `cpu_cgroup_css_online`.
    pub fn create(&mut self, path: &str) -> usize {
        let mut cur = ROOT;
        let mut prefix = String::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            prefix.push('/');
            prefix.push_str(part);
            cur = match self.find(&prefix) {
                Some(g) => g,
                None => {
                    // alloc_uclamp_sched_group(): default requests, the parent's effective
                    // clamps copied.
                    self.groups.push(TaskGroup {
                        path: prefix.clone(),
                        parent: Some(cur),
                        req: [0, SCHED_CAPACITY_SCALE],
                        pct: [0, PERCENT_SCALE],
                        eff: self.groups[cur].eff,
                    });
                    let g = self.groups.len() - 1;
                    if !self.no_eff_update_on_online {
                        self.update_eff(g);
                    }
                    g
                }
            };
        }
        cur
    }

    pub fn find(&self, path: &str) -> Option<usize> {
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        self.groups.iter().position(|g| g.path == path)
    }

    /// The parent group (the root is its own).
    pub fn parent(&self, g: usize) -> usize {
        self.groups[g].parent.unwrap_or(ROOT)
    }

    pub fn path(&self, g: usize) -> &str {
        &self.groups[g].path
    }

    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// `cpu_uclamp_write()` of `cpu.uclamp.min` (`id` 0) or `cpu.uclamp.max` (`id` 1).
    /// On success the caller must update the group's running tasks
    /// (`uclamp_update_active_tasks`) and turn the uclamp static key on.
    pub fn write_uclamp(&mut self, g: usize, id: usize, value: &str) -> Result<(), Errno> {
        if g == ROOT {
            return Err(Errno::ENOENT);
        }
        let pct = parse_percent(value)?;
        let util = (pct * SCHED_CAPACITY_SCALE as u64 + PERCENT_SCALE / 2) / PERCENT_SCALE;
        self.groups[g].req[id] = util as u32;
        self.groups[g].pct[id] = pct;
        self.update_eff(g);
        Ok(())
    }

    /// `cpu_uclamp_print()`: "max" for a 1024 request, else the percentage with two decimals.
    pub fn read_uclamp(&self, g: usize, id: usize) -> String {
        let tg = &self.groups[g];
        if tg.req[id] == SCHED_CAPACITY_SCALE {
            return "max".into();
        }
        format!("{}.{:02}", tg.pct[id] / 100, tg.pct[id] % 100)
    }

    /// The root group follows the sysctls (`uclamp_update_root_tg`).
    pub fn set_root(&mut self, root: [u32; 2]) {
        self.groups[ROOT].req = root;
        self.update_eff(ROOT);
    }

    /// `cpu_util_update_eff()`: effective clamps of `g` and its descendants, each the smaller
    /// of its request and its parent's effective value, with min capped by max.
    fn update_eff(&mut self, g: usize) {
        let mut eff = self.groups[g].req;
        if let Some(p) = self.groups[g].parent {
            let pe = self.groups[p].eff;
            eff = [eff[0].min(pe[0]), eff[1].min(pe[1])];
        }
        eff[0] = eff[0].min(eff[1]);
        self.groups[g].eff = eff;
        // Children always come after their parents in `groups`.
        for c in g + 1..self.groups.len() {
            if self.groups[c].parent == Some(g) {
                self.update_eff(c);
            }
        }
    }

    /// The group's effective (min, max).
    pub fn effective(&self, g: usize) -> [u32; 2] {
        self.groups[g].eff
    }

    /// Whether `g` is `a` or below it.
    pub fn is_within(&self, mut g: usize, a: usize) -> bool {
        loop {
            if g == a {
                return true;
            }
            match self.groups[g].parent {
                Some(p) => g = p,
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT_DEFAULT: [u32; 2] = [1024, 1024];

    #[test]
    fn percentages_parse_to_hundredths_and_round_to_capacity() {
        let mut cg = Cgroups::new(&["/bg".into()], ROOT_DEFAULT, false);
        let bg = cg.find("/bg").unwrap();
        cg.write_uclamp(bg, 1, "40.00").unwrap();
        // DIV_ROUND_CLOSEST(4000 * 1024, 10000) = 410 (409.6).
        assert_eq!(cg.effective(bg)[1], 410);
        assert_eq!(cg.read_uclamp(bg, 1), "40.00");
        cg.write_uclamp(bg, 1, "99.99").unwrap();
        // 99.99% rounds to 1024: it reads back as "max".
        assert_eq!(cg.read_uclamp(bg, 1), "max");
        cg.write_uclamp(bg, 0, "12.5").unwrap();
        assert_eq!(cg.read_uclamp(bg, 0), "12.50");
        assert_eq!(cg.write_uclamp(bg, 0, "100.01"), Err(Errno::ERANGE));
        assert_eq!(cg.write_uclamp(bg, 0, "abc"), Err(Errno::EINVAL));
        assert_eq!(cg.write_uclamp(bg, 0, "-1"), Err(Errno::ERANGE));
        cg.write_uclamp(bg, 0, "1.235").unwrap();
        assert_eq!(cg.read_uclamp(bg, 0), "1.24", "extra decimals are rounded");
        cg.write_uclamp(bg, 0, "12.5").unwrap();
        assert_eq!(cg.write_uclamp(ROOT, 0, "10"), Err(Errno::ENOENT));
        assert_eq!(
            cg.read_uclamp(bg, 0),
            "12.50",
            "failed writes change nothing"
        );
    }

    #[test]
    fn defaults_read_as_the_kernel_prints_them() {
        let cg = Cgroups::new(&["/a".into()], ROOT_DEFAULT, false);
        let a = cg.find("/a").unwrap();
        assert_eq!(cg.read_uclamp(a, 0), "0.00");
        assert_eq!(cg.read_uclamp(a, 1), "max");
        assert_eq!(cg.effective(a), [0, 1024]);
    }

    #[test]
    fn nested_groups_take_the_tighter_limit_and_min_is_capped_by_max() {
        let mut cg = Cgroups::new(&["/a/b".into()], ROOT_DEFAULT, false);
        let (a, b) = (cg.find("/a").unwrap(), cg.find("/a/b").unwrap());
        cg.write_uclamp(b, 1, "60").unwrap();
        cg.write_uclamp(a, 1, "30").unwrap();
        assert_eq!(cg.effective(b)[1], 307);
        // A child's protection cannot exceed its parent's (0 by default)...
        cg.write_uclamp(b, 0, "20").unwrap();
        assert_eq!(cg.effective(b)[0], 0);
        // ...and is capped by its own limit.
        cg.write_uclamp(a, 0, "max").unwrap();
        assert_eq!(cg.effective(a), [307, 307]);
        assert_eq!(cg.effective(b), [205, 307]);
        cg.write_uclamp(b, 0, "50").unwrap();
        assert_eq!(cg.effective(b), [307, 307]);
        assert!(cg.is_within(b, a));
    }

    #[test]
    fn root_follows_the_sysctls() {
        let mut cg = Cgroups::new(&["/a".into()], ROOT_DEFAULT, false);
        let a = cg.find("/a").unwrap();
        cg.write_uclamp(a, 0, "50").unwrap();
        cg.set_root([1024, 300]);
        assert_eq!(cg.effective(a), [300, 300]);
    }

    #[test]
    fn seed_003_bug_new_group_acts_as_max_until_written() {
        // Before v5.6 a new group kept a copy of the root's effective clamps (1024, 1024)...
        let mut buggy = Cgroups::new(&["/user.slice".into()], ROOT_DEFAULT, true);
        let g = buggy.find("/user.slice").unwrap();
        assert_eq!(buggy.read_uclamp(g, 0), "0.00");
        assert_eq!(buggy.effective(g), [1024, 1024]);
        // ...until someone writes to it ("echo 0 > cpu.uclamp.min").
        buggy.write_uclamp(g, 0, "0").unwrap();
        assert_eq!(buggy.effective(g), [0, 1024]);
        let fixed = Cgroups::new(&["/user.slice".into()], ROOT_DEFAULT, false);
        assert_eq!(
            fixed.effective(fixed.find("/user.slice").unwrap()),
            [0, 1024]
        );
    }
}
