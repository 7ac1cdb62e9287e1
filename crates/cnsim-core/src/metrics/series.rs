//! Binned time series in preallocated matrices (one row per entity, one
//! column per bin), stored row by row except the ports' sums (`PortSums`,
//! bin by bin). Recording is index arithmetic only: the bin
//! of the last recorded time is remembered, so the common case (the same bin
//! as last time) needs no division.

use crate::units::Time;

/// The bin of a time, cached: times arrive almost in order, so most lookups
/// fall in the window of the previous one.
#[derive(Clone, Copy)]
struct BinCursor {
    bin: u64,
    n_bins: usize,
    /// Index of the cached bin and its window `[lo, hi)`.
    index: usize,
    lo: u64,
    hi: u64,
}

impl BinCursor {
    fn new(n_bins: usize, bin: Time) -> Self {
        BinCursor {
            bin: bin.0,
            n_bins,
            index: 0,
            lo: 0,
            hi: bin.0,
        }
    }

    /// Bin of time `t` (times past the last bin count in the last bin).
    #[inline]
    fn of(&mut self, t: u64) -> usize {
        if t >= self.lo && t < self.hi {
            return self.index;
        }
        self.seek(t)
    }

    #[cold]
    fn seek(&mut self, t: u64) -> usize {
        let b = t / self.bin;
        if b as usize >= self.n_bins {
            // Not cached: the last bin is open-ended.
            return self.n_bins - 1;
        }
        self.index = b as usize;
        self.lo = b * self.bin;
        self.hi = self.lo + self.bin;
        self.index
    }
}

/// Sums per bin (bytes sent, delivered, dropped...): a matrix of one row per
/// entity and one column per bin, stored row by row, or bin by bin when
/// `BY_BIN` (`PortSums`).
///
/// Bin by bin, the cells a bin's additions go to lie side by side: for
/// rows added to at nearly every frame, such as a port's bytes sent, a few
/// hundred ports share a handful of cache lines while the bin lasts, where
/// row by row each port's cell is a line of its own (rows are `n_bins`
/// cells apart). Row by row suits rows that are few or rarely added to
/// (a flow's, a workload's) and hands its matrix over as it is.
pub struct BinnedSum<const BY_BIN: bool = false> {
    pub n_bins: usize,
    rows: usize,
    cursor: BinCursor,
    data: Vec<u64>,
}

/// A port's sums (bytes sent, drops, XOFFs), stored bin by bin: its bytes
/// sent are added to at every frame it sends.
pub type PortSums = BinnedSum<true>;

impl<const BY_BIN: bool> BinnedSum<BY_BIN> {
    pub fn new(rows: usize, n_bins: usize, bin: Time) -> Self {
        BinnedSum {
            n_bins,
            rows,
            cursor: BinCursor::new(n_bins, bin),
            data: vec![0; rows * n_bins],
        }
    }

    #[inline(always)]
    fn cell(&self, row: usize, b: usize) -> usize {
        if BY_BIN {
            b * self.rows + row
        } else {
            row * self.n_bins + b
        }
    }

    /// Add another partition's sums (a split run).
    pub fn absorb(&mut self, o: &Self) {
        for (a, b) in self.data.iter_mut().zip(&o.data) {
            *a += *b;
        }
    }

    #[inline]
    pub fn add(&mut self, row: usize, t: Time, v: u64) {
        let b = self.cursor.of(t.0);
        let i = self.cell(row, b);
        self.data[i] += v;
    }

    /// The sums of `row`, bin by bin.
    pub fn row(&self, row: usize) -> impl Iterator<Item = u64> + '_ {
        (0..self.n_bins).map(move |b| self.data[self.cell(row, b)])
    }

    /// The cell of `row` in the bin of the last addition: where the
    /// row's next one most likely goes.
    #[inline]
    pub fn current_cell(&self, row: usize) -> &u64 {
        &self.data[self.cell(row, self.cursor.index)]
    }

    /// The whole matrix row by row (the results' layout), leaving this one
    /// empty.
    pub fn take_rows(&mut self) -> Vec<u64> {
        let data = std::mem::take(&mut self.data);
        if !BY_BIN || self.rows <= 1 {
            return data;
        }
        let mut rows = vec![0; data.len()];
        for (b, bin) in data.chunks_exact(self.rows).enumerate() {
            for (r, &v) in bin.iter().enumerate() {
                rows[r * self.n_bins + b] = v;
            }
        }
        rows
    }
}

/// A piecewise-constant level (queue occupancy): time-weighted mean and
/// maximum per bin.
///
/// Each row keeps the sums of the bin it is in (`Row`) and writes them to
/// the matrices when it leaves that bin, so a change within the bin touches
/// one row record only. The sums are added in the same order as they would
/// be straight into the matrix, so the results are the same bits.
pub struct BinnedLevel {
    pub n_bins: usize,
    bin: u64,
    cursor: BinCursor,
    rows: Vec<Row>,
    /// Integral of the level over each bin, in byte-picoseconds.
    area: Vec<f64>,
    pub max: Vec<u64>,
}

/// A row's level since its last change, and the sums of its open bin,
/// which is the bin of the last change (the last bin for changes past
/// it). 32 bytes on a 32-byte boundary, so that a row never straddles two
/// cache lines: a port's row is read at every frame it queues or sends.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Row {
    /// Time of the last change and the level since.
    last: u64,
    level: u64,
    /// The open bin's integral so far and its maximum so far.
    area: f64,
    max: u64,
}

const _: () = assert!(std::mem::size_of::<Row>() == 32);

impl BinnedLevel {
    pub fn new(rows: usize, n_bins: usize, bin: Time) -> Self {
        BinnedLevel {
            n_bins,
            bin: bin.0,
            cursor: BinCursor::new(n_bins, bin),
            rows: vec![Row::default(); rows],
            area: vec![0.0; rows * n_bins],
            max: vec![0; rows * n_bins],
        }
    }

    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// The maxima of `row`, one per bin (complete after `finish`).
    pub fn max_row(&self, row: usize) -> &[u64] {
        &self.max[row * self.n_bins..(row + 1) * self.n_bins]
    }

    /// Take `row` as another partition kept it (a split run).
    pub fn take_row(&mut self, o: &BinnedLevel, row: usize) {
        self.take_row_as(o, row, row);
    }

    /// Take row `from` of another partition's series as row `to`.
    pub fn take_row_as(&mut self, o: &BinnedLevel, from: usize, to: usize) {
        let n = self.n_bins;
        self.rows[to] = o.rows[from];
        self.area[to * n..(to + 1) * n].copy_from_slice(&o.area[from * n..(from + 1) * n]);
        self.max[to * n..(to + 1) * n].copy_from_slice(&o.max[from * n..(from + 1) * n]);
    }

    /// Add a row whose level has been `level` since time zero, as if it had
    /// been set then and not since; returns its index.
    pub fn push_row(&mut self, level: u64) -> usize {
        self.rows.push(Row {
            last: 0,
            level,
            area: 0.0,
            max: level,
        });
        self.area.resize(self.area.len() + self.n_bins, 0.0);
        self.max.resize(self.max.len() + self.n_bins, 0);
        self.rows.len() - 1
    }

    /// The level of `row` becomes `v` at time `t`.
    #[inline(always)]
    pub fn set(&mut self, row: usize, t: Time, v: u64) {
        let t = t.0;
        let r = &mut self.rows[row];
        // The row's last change is no later than `t`, so both are in the
        // current bin if the change is at or after its start.
        if t < self.cursor.hi && r.last >= self.cursor.lo {
            // Common case: the old level held within the current bin.
            if r.level != 0 {
                // Through i64: the same value for anything below 2^63, and
                // one instruction instead of the unsigned conversion's several.
                r.area += r.level as i64 as f64 * (t - r.last) as i64 as f64;
            }
            r.max = r.max.max(r.level.max(v));
            r.last = t;
            r.level = v;
            return;
        }
        self.set_across(row, t, v);
    }

    /// `set` when the row's open bin is not the current one.
    #[inline(never)]
    fn set_across(&mut self, row: usize, t: u64, v: u64) {
        let b = self.cursor.of(t);
        let open = self.advance(row, t);
        if b != open {
            self.close(row, open);
        }
        let r = &mut self.rows[row];
        r.max = r.max.max(v);
        r.level = v;
    }

    /// The bin of a change at `t`: the last bin for changes past it.
    fn bin_of(&self, t: u64) -> usize {
        ((t / self.bin) as usize).min(self.n_bins - 1)
    }

    /// Account the current level from the last change up to `t` (not past
    /// the last bin), closing the bins it leaves; returns the bin then
    /// open, whose sums the row holds.
    fn advance(&mut self, row: usize, t: u64) -> usize {
        let Row {
            mut last, level, ..
        } = self.rows[row];
        let mut open = self.bin_of(last);
        self.rows[row].last = t;
        if level == 0 {
            return open;
        }
        while last < t {
            let b = (last / self.bin) as usize;
            if b >= self.n_bins {
                break;
            }
            if b != open {
                self.close(row, open);
                open = b;
            }
            let to = t.min((b as u64 + 1) * self.bin);
            let r = &mut self.rows[row];
            r.area += level as f64 * (to - last) as f64;
            r.max = r.max.max(level);
            last = to;
        }
        open
    }

    /// Write the sums of `row`'s open bin `bin` and start the next one.
    fn close(&mut self, row: usize, bin: usize) {
        let r = &mut self.rows[row];
        let i = row * self.n_bins + bin;
        self.area[i] = r.area;
        self.max[i] = r.max;
        r.area = 0.0;
        r.max = 0;
    }

    /// Close every row at time `end`, then return the per-bin means.
    pub fn finish(&mut self, end: Time) -> Vec<f64> {
        for row in 0..self.rows.len() {
            let open = self.advance(row, end.0);
            self.close(row, open);
        }
        let mut mean = self.area.clone();
        for (i, m) in mean.iter_mut().enumerate() {
            let b = (i % self.n_bins) as u64;
            let width = (end.0.min((b + 1) * self.bin)).saturating_sub(b * self.bin);
            *m = if width > 0 { *m / width as f64 } else { 0.0 };
        }
        mean
    }
}

/// Rows of series made on first use, for keys of which few ever need one
/// (a fabric's flows: few ever have a rate limiter, and a row for each of
/// the others would only repeat its line rate): the row of each key and
/// the key of each row.
#[derive(Default)]
pub struct RowsOnDemand {
    row_of: Vec<u32>,
    keys: Vec<u32>,
}

const NO_ROW: u32 = u32::MAX;

impl RowsOnDemand {
    /// No rows yet, for keys `0..keys`.
    pub fn new(keys: usize) -> Self {
        RowsOnDemand {
            row_of: vec![NO_ROW; keys],
            keys: Vec::new(),
        }
    }

    /// The row of `key`, if it has one (none for a key out of range).
    #[inline]
    pub fn get(&self, key: usize) -> Option<usize> {
        match self.row_of.get(key) {
            Some(&row) if row != NO_ROW => Some(row as usize),
            _ => None,
        }
    }

    /// Give `key`, which has none, the next row; returns it.
    pub fn add(&mut self, key: usize) -> usize {
        debug_assert_eq!(self.row_of[key], NO_ROW, "a key has one row");
        let row = self.keys.len();
        self.row_of[key] = row as u32;
        self.keys.push(key as u32);
        row
    }

    /// The keys that have rows, ascending, and the row of each: the order
    /// results list them in, whatever order the rows were made in.
    pub fn by_key(&self) -> (Vec<u32>, Vec<usize>) {
        let mut rows: Vec<usize> = (0..self.keys.len()).collect();
        rows.sort_unstable_by_key(|&r| self.keys[r]);
        (rows.iter().map(|&r| self.keys[r]).collect(), rows)
    }
}

/// Rows `order` of a rows × `n_bins` matrix, in that order.
pub fn gather_rows<T: Copy>(matrix: &[T], order: &[usize], n_bins: usize) -> Vec<T> {
    order
        .iter()
        .flat_map(|&r| &matrix[r * n_bins..(r + 1) * n_bins])
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_mean_and_max_are_time_weighted() {
        let mut l = BinnedLevel::new(1, 2, Time(100));
        l.set(0, Time(0), 10);
        l.set(0, Time(50), 30); // bin 0: 10 for 50, 30 for 50 -> mean 20
        l.set(0, Time(150), 0); // bin 1: 30 for 50, 0 for 50 -> mean 15
        let mean = l.finish(Time(200));
        assert_eq!(mean, vec![20.0, 15.0]);
        assert_eq!(l.max, vec![30, 30]);
    }

    #[test]
    fn a_rows_maxima_are_its_own_bins() {
        let mut l = BinnedLevel::new(2, 2, Time(100));
        l.set(0, Time(10), 5);
        l.set(1, Time(20), 40);
        l.set(1, Time(120), 7);
        l.finish(Time(200));
        assert_eq!(l.max_row(0), &[5, 5]);
        assert_eq!(l.max_row(1), &[40, 40]);
    }

    /// Random changes on several rows, within bins, across several bins,
    /// on bin boundaries, from and to zero, up to the end: the per-row
    /// open-bin sums give the same bits as adding every piece straight
    /// into the matrix, in time order.
    #[test]
    fn open_bin_sums_equal_adding_into_the_matrix() {
        use crate::engine::rng::stream;
        use rand::RngExt;
        let mut rng = stream(9, 0);
        let (rows, n_bins, bin) = (3usize, 7usize, 1_000u64);
        let end = n_bins as u64 * bin;
        for _ in 0..200 {
            let mut l = BinnedLevel::new(rows, n_bins, Time(bin));
            let mut area = vec![0.0f64; rows * n_bins];
            let mut max = vec![0u64; rows * n_bins];
            let mut state = vec![(0u64, 0u64); rows]; // (since, level)
                                                      // Integrate `level` over [from, to) bin by bin into the matrix.
            let pour =
                |row: usize, from: u64, to: u64, level: u64, area: &mut [f64], max: &mut [u64]| {
                    let mut t = from;
                    while t < to {
                        let b = (t / bin) as usize;
                        let upto = to.min((b as u64 + 1) * bin);
                        area[row * n_bins + b] += level as f64 * (upto - t) as f64;
                        max[row * n_bins + b] = max[row * n_bins + b].max(level);
                        t = upto;
                    }
                };
            let mut t = 0u64;
            for _ in 0..rng.random_range(1..60) {
                t += [0, 1, 37, 999, 1_000, 2_500][rng.random_range(0..6)];
                if t > end {
                    break;
                }
                let row = rng.random_range(0..rows);
                let v = [0, 0, 3, 1_500, 150_000][rng.random_range(0..5)];
                let (since, level) = state[row];
                if level != 0 {
                    pour(row, since, t, level, &mut area, &mut max);
                }
                let b = ((t / bin) as usize).min(n_bins - 1);
                max[row * n_bins + b] = max[row * n_bins + b].max(v);
                state[row] = (t, v);
                l.set(row, Time(t), v);
            }
            for (row, &(since, level)) in state.iter().enumerate() {
                if level != 0 {
                    pour(row, since, end, level, &mut area, &mut max);
                }
            }
            let mean = l.finish(Time(end));
            let want: Vec<f64> = area.iter().map(|a| a / bin as f64).collect();
            assert_eq!(
                mean.iter().map(|m| m.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|m| m.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(l.max, max);
        }
    }

    #[test]
    fn rows_share_the_bin_cursor_and_times_past_the_last_bin_count_in_it() {
        let mut l = BinnedLevel::new(2, 2, Time(100));
        l.set(0, Time(10), 10);
        l.set(1, Time(120), 4); // moves the cursor to bin 1
        l.set(0, Time(150), 0); // row 0: 10 over [10, 150)
        l.set(1, Time(180), 8);
        l.set(1, Time(250), 2); // past the end: accounted up to 200 only
        let mean = l.finish(Time(200));
        assert_eq!(mean, vec![9.0, 5.0, 0.0, (4.0 * 60.0 + 8.0 * 20.0) / 100.0]);
        assert_eq!(l.max, vec![10, 10, 0, 8]);
        let mut s: BinnedSum = BinnedSum::new(1, 2, Time(100));
        for t in [5, 150, 99, 400] {
            s.add(0, Time(t), 1);
        }
        assert_eq!(s.take_rows(), vec![2, 2]);
    }

    /// Sums stored bin by bin read and hand over the same rows as sums
    /// stored row by row, and the cell of the last addition is the same.
    #[test]
    fn sums_by_bin_read_as_sums_by_row() {
        let (rows, n_bins, bin) = (3, 4, Time(100));
        let mut by_row: BinnedSum = BinnedSum::new(rows, n_bins, bin);
        let mut by_bin = PortSums::new(rows, n_bins, bin);
        let adds = [
            (0, 5, 7),
            (2, 40, 1),
            (1, 150, 3),
            (2, 160, 9),
            (0, 390, 2),
            (1, 950, 4),
        ];
        for &(row, t, v) in &adds {
            by_row.add(row, Time(t), v);
            by_bin.add(row, Time(t), v);
            assert_eq!(by_bin.current_cell(row), by_row.current_cell(row));
        }
        for row in 0..rows {
            assert!(by_bin.row(row).eq(by_row.row(row)), "row {row}");
        }
        // Row 1: 3 in bin 1, 4 past the end (in the last bin).
        assert_eq!(by_bin.row(1).collect::<Vec<_>>(), vec![0, 3, 0, 4]);
        let mut other = PortSums::new(rows, n_bins, bin);
        other.add(2, Time(310), 5);
        by_bin.absorb(&other);
        by_row.add(2, Time(310), 5);
        let rows_by_row = by_row.take_rows();
        assert_eq!(rows_by_row, vec![7, 0, 0, 2, 0, 3, 0, 4, 1, 9, 0, 5]);
        assert_eq!(by_bin.take_rows(), rows_by_row);
    }

    /// A row made late holds what a row set at time zero and left alone
    /// until then would: the same means and maxima after the same changes,
    /// bit for bit, wherever the cursor is when it is made.
    #[test]
    fn a_row_made_late_equals_one_set_at_time_zero() {
        let (n_bins, bin) = (6, Time(100));
        let changes = [
            (Time(250), 4_u64),
            (Time(260), 9),
            (Time(420), 0),
            (Time(555), 7),
        ];
        let mut dense = BinnedLevel::new(2, n_bins, bin);
        dense.set(0, Time::ZERO, 10);
        let mut sparse = BinnedLevel::new(1, n_bins, bin);
        // Row 0 elsewhere moves the cursor past bin 0 before the new row exists.
        dense.set(1, Time(130), 3);
        sparse.set(0, Time(130), 3);
        let row = sparse.push_row(10);
        assert_eq!(row, 1);
        for &(t, v) in &changes {
            dense.set(0, t, v);
            sparse.set(row, t, v);
        }
        let (d, s) = (dense.finish(Time(600)), sparse.finish(Time(600)));
        // The rows trade places: the late one is the sparse series' second.
        let swap = |v: &[f64]| [&v[n_bins..], &v[..n_bins]].concat();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&d), bits(&swap(&s)));
        assert_eq!(dense.max_row(0), sparse.max_row(1));
        assert_eq!(dense.max_row(1), sparse.max_row(0));
        assert_eq!(d[..n_bins], [10.0, 10.0, 9.0, 9.0, 1.8, 3.15]);
    }

    #[test]
    fn rows_on_demand_list_their_keys_in_order_with_their_rows() {
        let mut rows = RowsOnDemand::new(10);
        assert_eq!(rows.get(7), None);
        assert_eq!(rows.add(7), 0);
        assert_eq!(rows.add(2), 1);
        assert_eq!(rows.add(5), 2);
        assert_eq!(
            (rows.get(7), rows.get(2), rows.get(3)),
            (Some(0), Some(1), None)
        );
        assert_eq!(rows.get(10), None);
        let (keys, order) = rows.by_key();
        assert_eq!(keys, vec![2, 5, 7]);
        assert_eq!(order, vec![1, 2, 0]);
        let matrix = [70, 71, 20, 21, 50, 51];
        assert_eq!(
            gather_rows(&matrix, &order, 2),
            vec![20, 21, 50, 51, 70, 71]
        );
    }
}
