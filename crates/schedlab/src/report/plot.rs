//! SVG plots (`--plot DIR`): a run's per-CPU frequency, task utilization (PELT util_avg and the
//! uclamp-clamped value), per-CPU task residency (a Gantt chart) and wakeup-latency CDF, and a
//! comparison's metrics as bars with error bars.
//!
//! The run plots come from [`PlotRecorder`], an observer of the event stream. Its memory does
//! not grow with simulated time: the run is cut into [`BINS`] equal bins and each series keeps
//! one value per bin (the time-weighted mean frequency; the last utilization seen; each task's
//! running time), latencies go into bounded histograms, and only the first [`MAX_TASKS`] task
//! names get their own series (the others are "other").

use super::compare::Comparison;

/// The sign rule of the percentages on the bars, short (compare.rs states it in full).
const RULE_SHORT: &str = "% is + when better; from a zero base 100 or -99, as mmtests";
use super::LatencyHistogram;
use crate::kernel::tracepoint::{EventSelection, Observer, TaskRef, TraceEvent};
use crate::platform::Platform;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// Time bins of a run's series.
pub const BINS: usize = 600;
/// Task names with their own series; further names are drawn as "other".
pub const MAX_TASKS: usize = 8;
const WIDTH: u32 = 1200;

/// Records what the run plots need while the run goes, and draws them at its end.
pub struct PlotRecorder {
    dir: PathBuf,
    nr_cpus: usize,
    /// The CPUs of each frequency domain (they share one frequency: one line each).
    domains: Vec<Vec<usize>>,
    bin_ns: u64,
    /// Per CPU: the current frequency (kHz) and since when; kHz·ns per bin.
    freq_now: Vec<Option<(u32, u64)>>,
    freq_area: Vec<Vec<f64>>,
    /// Task names with a series, in order of first appearance.
    names: Vec<String>,
    /// Per named task and bin: util_avg and the uclamp-clamped util at the last update.
    util: Vec<Vec<Option<(u16, u16)>>>,
    /// Per CPU: the running task's slot (`names` index, `MAX_TASKS` = other) and since when.
    running: Vec<Option<(usize, u64)>>,
    /// Per CPU, bin and slot: running time (ns).
    busy: Vec<Vec<[u64; MAX_TASKS + 1]>>,
    /// Per pid: when its wakeup happened, until it runs.
    waking: BTreeMap<u32, u64>,
    /// Per slot, and the last for all tasks.
    latency: Vec<LatencyHistogram>,
    last_ts: u64,
}

impl PlotRecorder {
    pub fn new(dir: &Path, platform: &Platform, duration_ns: u64) -> PlotRecorder {
        let n = platform.nr_cpus();
        PlotRecorder {
            dir: dir.to_path_buf(),
            nr_cpus: n,
            domains: platform
                .freq_domains
                .iter()
                .map(|d| d.cpus.clone())
                .collect(),
            bin_ns: duration_ns.div_ceil(BINS as u64).max(1),
            freq_now: vec![None; n],
            freq_area: vec![vec![0.0; BINS]; n],
            names: Vec::new(),
            util: Vec::new(),
            running: vec![None; n],
            busy: vec![vec![[0; MAX_TASKS + 1]; BINS]; n],
            waking: BTreeMap::new(),
            latency: (0..=MAX_TASKS + 1)
                .map(|_| LatencyHistogram::default())
                .collect(),
            last_ts: 0,
        }
    }

    /// The load-tracking events the recorder needs (the utilization series).
    pub fn events() -> EventSelection {
        EventSelection {
            sched_pelt_se: true,
            uclamp_util_se: true,
            ..EventSelection::default()
        }
    }

    fn bin(&self, ts: u64) -> usize {
        ((ts / self.bin_ns) as usize).min(BINS - 1)
    }

    /// Spread `[from, to)` over the bins it covers, calling `add(bin, ns)`.
    fn spread(bin_ns: u64, from: u64, to: u64, mut add: impl FnMut(usize, u64)) {
        let mut t = from;
        while t < to {
            let b = (t / bin_ns) as usize;
            if b >= BINS {
                return;
            }
            let end = ((b as u64 + 1) * bin_ns).min(to);
            add(b, end - t);
            t = end;
        }
    }

    fn slot(&mut self, comm: &str) -> usize {
        match self.names.iter().position(|n| n == comm) {
            Some(i) => i,
            None if self.names.len() < MAX_TASKS => {
                self.names.push(comm.to_string());
                self.util.push(vec![None; BINS]);
                self.names.len() - 1
            }
            None => MAX_TASKS,
        }
    }

    fn close_running(&mut self, cpu: usize, ts: u64) {
        if let Some((slot, since)) = self.running[cpu] {
            let busy = &mut self.busy[cpu];
            Self::spread(self.bin_ns, since, ts, |b, ns| busy[b][slot] += ns);
        }
    }

    fn close_freq(&mut self, cpu: usize, ts: u64) {
        if let Some((khz, since)) = self.freq_now[cpu] {
            let area = &mut self.freq_area[cpu];
            Self::spread(self.bin_ns, since, ts, |b, ns| {
                area[b] += khz as f64 * ns as f64
            });
        }
    }

    fn draw_all(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let end = self.last_ts;
        for cpu in 0..self.nr_cpus {
            self.close_running(cpu, end);
            self.running[cpu] = self.running[cpu].map(|(s, _)| (s, end));
            self.close_freq(cpu, end);
            self.freq_now[cpu] = self.freq_now[cpu].map(|(k, _)| (k, end));
        }
        std::fs::create_dir_all(&self.dir)?;
        let used_bins = (self.bin(end.max(1) - 1) + 1).min(BINS);
        let bin_s = self.bin_ns as f64 / 1e9;
        let t_max = used_bins as f64 * bin_s;
        self.draw_frequency(used_bins, bin_s, t_max)?;
        self.draw_util(used_bins, bin_s, t_max)?;
        self.draw_residency(used_bins, bin_s, t_max)?;
        self.draw_latency()?;
        Ok(())
    }

    fn draw_frequency(
        &self,
        used: usize,
        bin_s: f64,
        t_max: f64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let path = self.dir.join("frequency.svg");
        let root = SVGBackend::new(&path, (WIDTH, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        // The legend has its own strip right of the chart, so it never covers the data.
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let bin_ns = self.bin_ns as f64;
        // The CPUs of a domain run at its one frequency: a line per domain, from its first CPU.
        let series: Vec<Vec<(f64, f64)>> = self
            .domains
            .iter()
            .filter_map(|cpus| cpus.first())
            .map(|&cpu| {
                self.freq_area[cpu][..used]
                    .iter()
                    .enumerate()
                    .filter(|(_, &x)| x > 0.0)
                    .map(|(b, &x)| ((b as f64 + 0.5) * bin_s, x / bin_ns / 1000.0))
                    .collect()
            })
            .collect();
        let f_max = series.iter().flatten().map(|p| p.1).fold(1.0f64, f64::max);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(
                "Frequency per domain (mean per time bin)",
                ("sans-serif", 24),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, 0.0..f_max * 1.05)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("frequency (MHz)")
            .y_label_formatter(&|y| format!("{y:.0}"))
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .draw()?;
        let mut entries = Vec::new();
        for (d, s) in series.into_iter().enumerate() {
            let color = Palette99::pick(d).to_rgba();
            chart.draw_series(LineSeries::new(s, color.stroke_width(2)))?;
            entries.push((domain_label(&self.domains[d]), color));
        }
        draw_side_legend(&legend_area, &entries)?;
        root.present()?;
        Ok(())
    }

    fn draw_util(
        &self,
        used: usize,
        bin_s: f64,
        t_max: f64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let path = self.dir.join("util.svg");
        let root = SVGBackend::new(&path, (WIDTH, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Task utilization: util_avg (solid), uclamp-clamped (dashed)",
                ("sans-serif", 24),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, 0.0..1100.0)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("utilization (0..1024)")
            .y_label_formatter(&|y| format!("{y:.0}"))
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .draw()?;
        for (i, name) in self.names.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts = |pick: fn((u16, u16)) -> u16| -> Vec<(f64, f64)> {
                self.util[i][..used]
                    .iter()
                    .enumerate()
                    .filter_map(|(b, v)| v.map(|v| ((b as f64 + 0.5) * bin_s, pick(v) as f64)))
                    .collect()
            };
            let raw = pts(|v| v.0);
            if raw.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(raw, color.stroke_width(2)))?
                .label(name.clone())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(DashedLineSeries::new(
                pts(|v| v.1),
                6,
                4,
                color.stroke_width(1),
            ))?;
        }
        draw_legend(&mut chart, None)?;
        root.present()?;
        Ok(())
    }

    fn draw_residency(
        &self,
        used: usize,
        bin_s: f64,
        t_max: f64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let path = self.dir.join("residency.svg");
        let height = (160 + 50 * self.nr_cpus as u32).max(400);
        let root = SVGBackend::new(&path, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let n = self.nr_cpus as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption("Which task ran on each CPU", ("sans-serif", 24))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, -0.5..n - 0.5)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("CPU")
            .y_labels(self.nr_cpus)
            .y_label_formatter(&|y| format!("CPU{}", y.round() as i64))
            .disable_y_mesh()
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .draw()?;
        let color = |slot: usize| {
            if slot == MAX_TASKS {
                RGBAColor(128, 128, 128, 1.0)
            } else {
                Palette99::pick(slot).to_rgba()
            }
        };
        let bin_ns = self.bin_ns as f64;
        let mut rects = Vec::new();
        for (cpu, bins) in self.busy.iter().enumerate() {
            let y = cpu as f64;
            for (b, slots) in bins[..used].iter().enumerate() {
                // The bin's tasks side by side, each as wide as its share of the bin.
                let mut x = b as f64 * bin_s;
                for (slot, &ns) in slots.iter().enumerate().filter(|(_, &ns)| ns > 0) {
                    let w = ns as f64 / bin_ns * bin_s;
                    rects.push(Rectangle::new(
                        [(x, y - 0.35), (x + w, y + 0.35)],
                        color(slot).filled(),
                    ));
                    x += w;
                }
            }
        }
        chart.draw_series(rects)?;
        let mut labels: Vec<(String, usize)> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        if self.busy.iter().flatten().any(|s| s[MAX_TASKS] > 0) {
            labels.push(("other".into(), MAX_TASKS));
        }
        for (name, slot) in labels {
            let c = color(slot);
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
        }
        draw_legend(&mut chart, Some(SeriesLabelPosition::UpperRight))?;
        root.present()?;
        Ok(())
    }

    fn draw_latency(&self) -> Result<(), Box<dyn std::error::Error>> {
        let path = self.dir.join("latency_cdf.svg");
        let root = SVGBackend::new(&path, (WIDTH, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let all = &self.latency[MAX_TASKS + 1];
        // Log scale from 10 ns; a zero latency (woken onto an idle CPU, switched in at once)
        // is drawn at the left edge.
        let x_min = 0.01;
        let x_max = (all.percentile(100.0) as f64 / 1e3).max(2.0) * 1.2;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Wakeup latency (wakeup to running), CDF",
                ("sans-serif", 24),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("wakeup latency (µs, log scale; 0 at the left edge)")
            .y_desc("fraction of wakeups ≤ x")
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .draw()?;
        let mut series: Vec<(String, usize)> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        series.push(("other".into(), MAX_TASKS));
        series.push(("all tasks".into(), MAX_TASKS + 1));
        for (name, i) in series {
            let h = &self.latency[i];
            if h.count() == 0 {
                continue;
            }
            let pts: Vec<(f64, f64)> = (0..=200)
                .map(|k| {
                    let q = k as f64 / 2.0;
                    ((h.percentile(q) as f64 / 1e3).max(x_min), q / 100.0)
                })
                .collect();
            let color = if i == MAX_TASKS + 1 {
                BLACK.to_rgba()
            } else if i == MAX_TASKS {
                RGBAColor(128, 128, 128, 1.0)
            } else {
                Palette99::pick(i).to_rgba()
            };
            let width = if i == MAX_TASKS + 1 { 3 } else { 2 };
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(width)))?
                .label(format!("{name} ({} wakeups)", h.count()))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(width))
                });
        }
        draw_legend(&mut chart, Some(SeriesLabelPosition::LowerRight))?;
        root.present()?;
        Ok(())
    }
}

impl Observer for PlotRecorder {
    fn event(&mut self, ts: u64, _cpu: usize, _current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        self.last_ts = self.last_ts.max(ts);
        match *ev {
            TraceEvent::CpuFrequency { khz, cpu } => {
                self.close_freq(cpu, ts);
                self.freq_now[cpu] = Some((khz, ts));
            }
            TraceEvent::SchedWakeup { p, .. } | TraceEvent::SchedWakeupNew { p, .. } => {
                self.waking.insert(p.pid, ts);
            }
            TraceEvent::SchedSwitch { next, cpu, .. } => {
                self.close_running(cpu, ts);
                self.running[cpu] = if next.pid == 0 {
                    None
                } else {
                    Some((self.slot(next.comm), ts))
                };
                if let Some(woken) = self.waking.remove(&next.pid) {
                    let slot = self.slot(next.comm);
                    self.latency[slot].record(ts - woken);
                    self.latency[MAX_TASKS + 1].record(ts - woken);
                }
            }
            TraceEvent::SchedProcessExit { p } => {
                self.waking.remove(&p.pid);
            }
            TraceEvent::UclampUtilSe { p, clamps, .. } => {
                let slot = self.slot(p.comm);
                if slot < MAX_TASKS {
                    let b = self.bin(ts);
                    self.util[slot][b] = Some((clamps.util_avg as u16, clamps.uclamp_avg as u16));
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.draw_all()
            .map_err(|e| io::Error::other(format!("plot: {e}")))
    }
}

/// Sends every event to the trace writer and the plot recorder; the trace gets the
/// load-tracking events only if they were asked for.
pub struct Tee {
    pub trace: Box<dyn Observer>,
    pub trace_events: EventSelection,
    pub plot: PlotRecorder,
}

impl Observer for Tee {
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        let wanted = match ev {
            TraceEvent::SchedPeltSe { .. } => self.trace_events.sched_pelt_se,
            TraceEvent::UclampUtilSe { .. } => self.trace_events.uclamp_util_se,
            _ => true,
        };
        if wanted {
            self.trace.event(ts, cpu, current, ev);
        }
        self.plot.event(ts, cpu, current, ev);
    }

    fn finish(&mut self) -> io::Result<()> {
        let trace = self.trace.finish();
        self.plot.finish()?;
        trace
    }
}

/// `compare --plot DIR`: `DIR/compare.svg`, one panel per metric (but those zero on every
/// side) with a bar per side (its mean), an error bar of ± one standard deviation and the
/// difference to the first side, between `*` when significant.
pub fn compare_bars(c: &Comparison, dir: &Path) -> Result<(), crate::Error> {
    let path = dir.join("compare.svg");
    let io = |e: io::Error| crate::Error::Io {
        path: path.display().to_string(),
        source: e,
    };
    // Staged as a run's plots are: a failure leaves nothing, not even the directory.
    let staged = crate::output::Staged::dir(dir).map_err(io)?;
    draw_compare(c, &staged.path().join("compare.svg"))
        .map_err(|e| io(io::Error::other(e.to_string())))?;
    staged.commit().map_err(io)
}

fn draw_compare(c: &Comparison, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // Every metric gets a panel; one that is zero on every side says so in its title.
    let metrics: Vec<_> = c.metrics.iter().collect();
    let cols = 2usize;
    let rows = metrics.len().div_ceil(cols).max(1);
    let n = c.sides.len();
    // The sides are numbered under the bars (numbers never overlap) and named in a key above
    // the panels, one line each.
    let key_height = 30 + 22 * n as u32;
    let root = SVGBackend::new(path, (WIDTH, key_height + 380 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let (key, body) = root.split_vertically(key_height);
    key.draw(&Text::new(
        format!("sides ({RULE_SHORT}):"),
        (15, 8),
        ("sans-serif", 16).into_font(),
    ))?;
    for (i, side) in c.sides.iter().enumerate() {
        key.draw(&Text::new(
            format!("{}: {side}", i + 1),
            (30, 30 + 22 * i as i32),
            ("sans-serif", 16).into_font().color(&Palette99::pick(i)),
        ))?;
    }
    let panels = body.split_evenly((rows, cols));
    for (m, area) in metrics.into_iter().zip(panels.iter()) {
        let all_zero = m.means.iter().all(|&x| x == 0.0);
        let top = m
            .means
            .iter()
            .zip(&m.stddevs)
            .map(|(a, s)| a + s)
            .fold(0.0f64, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let kind = match m.mean {
            super::compare::MeanKind::Hmean => "Hmean",
            super::compare::MeanKind::Amean => "Amean",
        };
        let mut chart = ChartBuilder::on(area)
            .caption(
                if all_zero {
                    format!("{} ({kind}): 0 on every side", m.metric)
                } else {
                    format!("{} ({kind} ± stddev)", m.metric)
                },
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() > 0.01 || i < 0.0 || i as usize >= n {
                    return String::new();
                }
                format!("{}", i as usize + 1)
            })
            .x_desc("side")
            .y_desc(unit_of(&m.metric))
            .axis_desc_style(("sans-serif", 18))
            .label_style(("sans-serif", 15))
            .draw()?;
        for i in 0..n {
            let x = i as f64;
            let color = Palette99::pick(i).to_rgba();
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.3, 0.0), (x + 0.3, m.means[i])],
                color.mix(0.7).filled(),
            )))?;
            let (lo, hi) = (m.means[i] - m.stddevs[i], m.means[i] + m.stddevs[i]);
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x,
                lo.max(0.0),
                m.means[i],
                hi,
                BLACK.stroke_width(2),
                12,
            )))?;
            if i > 0 {
                let mark = if m.significant[i] { "*" } else { "" };
                let style = TextStyle::from(("sans-serif", 16).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                chart.draw_series(std::iter::once(Text::new(
                    format!("{mark}{:+.1}%{mark}", m.diff_pct[i]),
                    (x, hi.max(m.means[i]) + top * 0.02),
                    style,
                )))?;
            }
        }
    }
    root.present()?;
    Ok(())
}

/// Width of the strip beside a chart that holds its legend.
const LEGEND_WIDTH: u32 = 200;

/// `CPU0-3` or `CPU0,4,5`: the CPUs of a frequency domain, for its legend entry.
pub fn domain_label(cpus: &[usize]) -> String {
    let contiguous = cpus.windows(2).all(|w| w[1] == w[0] + 1);
    match (cpus.first(), cpus.last()) {
        (Some(a), Some(b)) if contiguous && a != b => format!("CPU{a}-{b}"),
        _ => format!(
            "CPU{}",
            cpus.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// A legend drawn in its own area (beside the chart, never over the data): a line of the
/// series' colour and its name per entry.
fn draw_side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBAColor)],
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    for (i, (name, color)) in entries.iter().enumerate() {
        let y = 60 + 26 * i as i32;
        area.draw(&PathElement::new([(10, y), (34, y)], color.stroke_width(3)))?;
        area.draw(&Text::new(
            name.clone(),
            (42, y - 8),
            ("sans-serif", 16).into_font(),
        ))?;
    }
    Ok(())
}

/// The y-axis title of a metric: its unit from its name.
fn unit_of(metric: &str) -> String {
    let leaf = metric.rsplit('.').next().unwrap_or(metric);
    let unit = if leaf == "iops" {
        "I/O per second"
    } else if leaf.ends_with("_per_sec") {
        "per second"
    } else if leaf.ends_with("_us") || leaf.starts_with("usecs") {
        "µs"
    } else if leaf.ends_with("_ns") {
        "ns"
    } else if leaf.ends_with("_mj") {
        "mJ"
    } else {
        "count"
    };
    format!("{leaf} ({unit})")
}

/// The legend every plot draws: readable font, translucent white box with a border, at
/// `position` (plotters' default place when None).
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: Option<SeriesLabelPosition>,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let mut legend = chart.configure_series_labels();
    if let Some(p) = position {
        legend.position(p);
    }
    legend
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_does_not_grow_with_time_or_tasks_and_bins_keep_all_time() {
        let p = Platform::resolve("juno-r0").unwrap();
        // 1000 s of simulated time, 10 000 short-lived tasks, each woken, run 1 ms on CPU 0
        // and exited.
        let mut rec = PlotRecorder::new(Path::new("unused"), &p, 1_000_000_000_000);
        let mut ts = 0;
        for i in 0..10_000u32 {
            let comm = format!("t{i}");
            let t = TaskRef {
                comm: &comm,
                pid: 1000 + i,
                prio: 120,
            };
            let idle = TaskRef {
                comm: "swapper/0",
                pid: 0,
                prio: 120,
            };
            let wake = TraceEvent::SchedWakeup {
                p: t,
                target_cpu: 0,
            };
            rec.event(ts, 0, None, &wake);
            let cpu = 0;
            let switch_in = TraceEvent::SchedSwitch {
                prev: idle,
                prev_state: "R",
                next: t,
                cpu,
            };
            rec.event(ts + 5_000, 0, None, &switch_in);
            let switch_out = TraceEvent::SchedSwitch {
                prev: t,
                prev_state: "X",
                next: idle,
                cpu,
            };
            rec.event(
                ts + 1_005_000,
                0,
                Some(t),
                &TraceEvent::SchedProcessExit { p: t },
            );
            rec.event(ts + 1_005_000, 0, Some(t), &switch_out);
            ts += 100_000_000;
        }
        assert!(rec.waking.is_empty());
        assert_eq!((rec.names.len(), rec.util.len()), (MAX_TASKS, MAX_TASKS));
        assert!(rec.busy.iter().all(|b| b.len() == BINS));
        assert!(rec.freq_area.iter().all(|b| b.len() == BINS));
        let busy: u64 = rec.busy[0].iter().flatten().sum();
        assert_eq!(busy, 10_000 * 1_000_000, "every running ns lands in a bin");
        assert_eq!(rec.latency[MAX_TASKS + 1].count(), 10_000);
        assert_eq!(rec.latency[MAX_TASKS + 1].percentile(50.0), 5_000);
    }
}
