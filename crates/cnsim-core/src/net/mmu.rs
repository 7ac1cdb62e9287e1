//! A shared-buffer switch memory (the MMU of a switch ASIC): one buffer per
//! switch, accounted per ingress (port, priority) and per egress (port,
//! priority).
//!
//! The buffer is cut into three kinds of space:
//!
//! * a guaranteed **reserve** per ingress (port, priority), private to it;
//! * a **headroom** per ingress port and lossless priority: room for what
//!   is still in flight after a PFC XOFF, used only once the queue is over
//!   its XOFF threshold;
//! * the **shared pool**: what is left, `total − Σ reserve − Σ headroom`,
//!   used by every queue once its reserve is full.
//!
//! A frame is charged to its ingress (port, priority), in that order:
//! reserve, then shared, then (lossless only) headroom; and to its egress
//! (port, priority) as a plain byte count. Lossless priorities are held
//! back by PFC before they run out of shared room; lossy ones are admitted
//! into the shared pool only while their egress queue is under its own
//! threshold, and are dropped otherwise.
//!
//! Thresholds are either static (bytes) or dynamic: α times the free shared
//! pool, so that the more the pool fills, the less any one queue may take.
//! A single queue facing a dynamic threshold settles where its shared use
//! `s` equals `α·(pool − s)`, that is at `α/(1+α)` of the pool.
//!
//! Pure model: no events, no frames; the engine calls `admit` when a frame
//! arrives, `release` when its last bit has left, and `pfc_decision` to
//! learn whether an ingress priority should be paused.
//!
//! The ingress cells of every shared-buffer switch of a network live in one
//! table (`IngressCells`), by (port, priority) with ports numbered
//! network-wide, as frames name them: a frame within its queue's reserve
//! (most of them) is admitted and released by its cell alone, without a
//! read of its switch's state first. An `Mmu` keeps the counters of its
//! whole buffer and works on its own ports' cells.

use crate::units::Bytes;

/// Priorities (traffic classes) per port, as in IEEE 802.1Q (numbered 0–7).
pub const CLASSES: usize = 8;

/// The factor of a dynamic threshold, a fraction `num/den` (ASICs offer
/// powers of two from 1/128 to 8; a fraction keeps the arithmetic exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Alpha {
    pub num: u32,
    pub den: u32,
}

impl Alpha {
    pub const ONE: Alpha = Alpha { num: 1, den: 1 };

    pub const fn new(num: u32, den: u32) -> Alpha {
        Alpha { num, den }
    }

    /// `α·bytes`, rounded down (a shift when the denominator is a power
    /// of two, as every α a scenario gives is).
    #[inline]
    fn of(self, bytes: u64) -> u64 {
        let product = bytes as u128 * self.num as u128;
        if self.den.is_power_of_two() {
            (product >> self.den.trailing_zeros()) as u64
        } else {
            (product / self.den as u128) as u64
        }
    }
}

/// A limit on a queue's use of the shared pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    Static(Bytes),
    /// α times the free shared pool at the moment of the decision.
    Dynamic(Alpha),
}

impl Threshold {
    fn bytes(self, free: u64) -> u64 {
        match self {
            Threshold::Static(b) => b.0,
            Threshold::Dynamic(a) => a.of(free),
        }
    }
}

/// How the buffer treats one priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassMode {
    /// Lossless (PFC): an ingress queue whose shared use reaches `xoff` is
    /// paused, and may resume once its use is `resume_offset` below it.
    Lossless {
        xoff: Threshold,
        resume_offset: Bytes,
    },
    /// Lossy: beyond its reserve a frame enters the shared pool only if its
    /// egress queue stays within `egress`; otherwise it is dropped.
    Lossy { egress: Threshold },
}

/// A switch's shared buffer as its scenario gives it (`buffer_model =
/// "shared"` and its `mmu` table), with the headroom of each of its ports
/// (in link order) resolved; `mmu_spec` applies it to the lossless classes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SharedBufferSpec {
    pub total: Bytes,
    /// Guaranteed bytes per ingress (port, class).
    pub reserve: Bytes,
    /// XOFF threshold of a lossless ingress (port, class) on its shared use.
    pub lossless_xoff: Threshold,
    /// XON once the shared use is this far below the threshold.
    pub resume_offset: Bytes,
    /// Egress threshold of lossy classes.
    pub lossy_egress: Threshold,
    /// Headroom of each lossless class of each port, in the switch's link
    /// order.
    pub headroom: Vec<Bytes>,
}

impl SharedBufferSpec {
    /// The MMU's configuration with the classes in `lossless` (bit n:
    /// class n) lossless and the others lossy; only the first `in_use`
    /// classes (those the scenario has) get a reserve.
    pub fn mmu_spec(&self, lossless: u8, in_use: u8) -> MmuSpec {
        let classes = std::array::from_fn(|c| {
            if lossless & (1 << c) != 0 {
                ClassMode::Lossless {
                    xoff: self.lossless_xoff,
                    resume_offset: self.resume_offset,
                }
            } else {
                ClassMode::Lossy {
                    egress: self.lossy_egress,
                }
            }
        });
        let ports = self.headroom.len();
        let headroom = (0..ports * CLASSES)
            .map(|i| match classes[i % CLASSES] {
                ClassMode::Lossless { .. } => self.headroom[i / CLASSES],
                ClassMode::Lossy { .. } => Bytes(0),
            })
            .collect();
        MmuSpec {
            total: self.total,
            ports,
            classes,
            reserve: (0..ports * CLASSES)
                .map(|i| {
                    if i % CLASSES < in_use as usize {
                        self.reserve
                    } else {
                        Bytes(0)
                    }
                })
                .collect(),
            headroom,
        }
    }
}

/// A switch's buffer configuration, resolved. Per-(port, priority) tables
/// are dense, indexed by `port * 8 + priority`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MmuSpec {
    /// The whole buffer.
    pub total: Bytes,
    pub ports: usize,
    pub classes: [ClassMode; CLASSES],
    /// Guaranteed bytes per ingress (port, priority).
    pub reserve: Vec<Bytes>,
    /// Headroom per ingress (port, priority); zero for lossy priorities.
    pub headroom: Vec<Bytes>,
}

impl MmuSpec {
    /// The same reserve for every ingress (port, priority) and the same
    /// headroom for every ingress (port, lossless priority).
    pub fn uniform(
        total: Bytes,
        ports: usize,
        classes: [ClassMode; CLASSES],
        reserve: Bytes,
        headroom: Bytes,
    ) -> MmuSpec {
        let headroom = (0..ports * CLASSES)
            .map(|i| match classes[i % CLASSES] {
                ClassMode::Lossless { .. } => headroom,
                ClassMode::Lossy { .. } => Bytes(0),
            })
            .collect();
        MmuSpec {
            total,
            ports,
            classes,
            reserve: vec![reserve; ports * CLASSES],
            headroom,
        }
    }

    /// The shared pool this layout leaves (`total` less every reserve and
    /// headroom), or why it cannot be laid out.
    pub fn shared_pool(&self) -> Result<Bytes, MmuError> {
        let n = self.ports * CLASSES;
        for (table, v) in [("reserve", &self.reserve), ("headroom", &self.headroom)] {
            if v.len() != n {
                return Err(MmuError::TableLength {
                    table,
                    found: v.len(),
                    expected: n,
                });
            }
        }
        for (i, &bytes) in self.headroom.iter().enumerate() {
            let prio = i % CLASSES;
            if bytes.0 > 0 && matches!(self.classes[prio], ClassMode::Lossy { .. }) {
                return Err(MmuError::HeadroomOnLossy {
                    port: i / CLASSES,
                    prio,
                    bytes,
                });
            }
        }
        for (prio, class) in self.classes.iter().enumerate() {
            let (ClassMode::Lossless { xoff: t, .. } | ClassMode::Lossy { egress: t }) = *class;
            if matches!(t, Threshold::Dynamic(a) if a.den == 0) {
                return Err(MmuError::ZeroAlphaDenominator { prio });
            }
        }
        for (table, v) in [("reserve", &self.reserve), ("headroom", &self.headroom)] {
            if let Some(i) = v.iter().position(|b| b.0 > u32::MAX as u64) {
                return Err(MmuError::QueueTooLarge {
                    table,
                    port: i / CLASSES,
                    prio: i % CLASSES,
                    bytes: v[i],
                });
            }
        }
        let reserved: u64 = self.reserve.iter().map(|b| b.0).sum();
        let headroom: u64 = self.headroom.iter().map(|b| b.0).sum();
        if reserved + headroom > self.total.0 {
            return Err(MmuError::Overcommitted {
                total: self.total,
                reserved: Bytes(reserved),
                headroom: Bytes(headroom),
            });
        }
        Ok(Bytes(self.total.0 - reserved - headroom))
    }
}

/// Why a configuration cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MmuError {
    #[error("{table} has {found} entries, expected {expected} (8 per port)")]
    TableLength {
        table: &'static str,
        found: usize,
        expected: usize,
    },
    #[error("headroom of {bytes} given to lossy priority {prio} of port {port}")]
    HeadroomOnLossy {
        port: usize,
        prio: usize,
        bytes: Bytes,
    },
    #[error("reserves ({reserved}) and headroom ({headroom}) exceed the buffer ({total})")]
    Overcommitted {
        total: Bytes,
        reserved: Bytes,
        headroom: Bytes,
    },
    #[error("the dynamic threshold of priority {prio} has a zero denominator")]
    ZeroAlphaDenominator { prio: usize },
    #[error("{table} of {bytes} for priority {prio} of port {port}: at most 4 GiB per queue")]
    QueueTooLarge {
        table: &'static str,
        port: usize,
        prio: usize,
        bytes: Bytes,
    },
}

/// Where the bytes of one ingress (port, priority) sit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IngressUse {
    pub reserve: Bytes,
    pub shared: Bytes,
    pub headroom: Bytes,
}

impl IngressUse {
    pub fn total(&self) -> Bytes {
        Bytes(self.reserve.0 + self.shared.0 + self.headroom.0)
    }
}

/// The outcome of `Mmu::admit`. Only `Admitted` changes the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// A lossy frame beyond its reserve, with its egress queue at its
    /// threshold or the shared pool full.
    Dropped,
    /// A lossless frame that finds its headroom full: PFC failed to hold
    /// the upstream in time. The frame is not admitted; the caller reports
    /// the violation.
    HeadroomOverflow,
}

/// One ingress (port, priority): its limits beside its use and its PFC
/// state, so that an admission or a release reads one place. Reserve and
/// headroom (limits and use) are 32-bit (`Mmu::new` refuses more than
/// 4 GiB of either per queue): the cell is 32 bytes, two to a cache line,
/// none straddling two.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
struct IngressCell {
    reserve_limit: u32,
    headroom_limit: u32,
    reserve: u32,
    headroom: u32,
    shared: u64,
    /// PFC holds the upstream of this queue: the switch's PFC sender
    /// decides it, the engine copies it here (`set_held`).
    held: bool,
}

impl IngressCell {
    fn used(&self) -> IngressUse {
        IngressUse {
            reserve: Bytes(self.reserve as u64),
            shared: Bytes(self.shared),
            headroom: Bytes(self.headroom as u64),
        }
    }
}

const _: () = assert!(std::mem::size_of::<IngressCell>() == 32);

/// A switch's buffer state: the pool's and headroom's counters; its
/// queues' counters are its ports' cells in `IngressCells`.
#[derive(Debug, Clone)]
pub struct Mmu {
    /// The switch's ports, network-wide numbers in link order (the order of
    /// `MmuSpec`'s tables).
    ports: Box<[u32]>,
    /// Size of the shared pool.
    pool: u64,
    /// Bytes of the shared pool in use, over all queues.
    shared_used: u64,
    /// The least free pool at which every lossless class's XOFF threshold
    /// is above zero (`u64::MAX` if some class's never is): with at least
    /// this much free, a queue holding reserve only has no PFC decision
    /// to change unless PFC holds it (`calm`).
    nonzero_xoff_free: u64,
    /// Bytes of headroom in use, over all queues.
    headroom_used: u64,
    classes: [ClassMode; CLASSES],
}

/// `Mmu::nonzero_xoff_free` of these classes and pool: for each lossless
/// class, the least free pool (of at most `pool`) at which its threshold
/// is above zero, found by bisection (a threshold never falls as the free
/// pool grows); the largest of them.
fn nonzero_xoff_free(classes: &[ClassMode; CLASSES], pool: u64) -> u64 {
    classes
        .iter()
        .filter_map(|class| match *class {
            ClassMode::Lossless { xoff, .. } => Some(xoff),
            ClassMode::Lossy { .. } => None,
        })
        .map(|xoff| {
            if xoff.bytes(pool) == 0 {
                return u64::MAX;
            }
            let (mut zero_below, mut nonzero) = (0u64, pool);
            if xoff.bytes(0) > 0 {
                return 0;
            }
            // bytes(zero_below) == 0 < bytes(nonzero)
            while nonzero - zero_below > 1 {
                let mid = zero_below + (nonzero - zero_below) / 2;
                if xoff.bytes(mid) > 0 {
                    nonzero = mid;
                } else {
                    zero_below = mid;
                }
            }
            nonzero
        })
        .max()
        .unwrap_or(0)
}

#[inline(always)]
fn index(port: usize, prio: u8) -> usize {
    debug_assert!((prio as usize) < CLASSES, "priority {prio}");
    port * CLASSES + prio as usize
}

/// The ingress cells of a network's shared-buffer switches, `CLASSES` to a
/// port, indexed by the port's network-wide number (the one a frame
/// carries): the rows of ports of other nodes stay unused. Empty in a
/// network without shared buffers.
#[derive(Debug, Clone, Default)]
pub struct IngressCells {
    cells: Vec<IngressCell>,
}

impl IngressCells {
    /// Room for `ports` ports, every cell empty and without limits (an
    /// `Mmu` sets its ports' limits).
    pub fn new(ports: usize) -> IngressCells {
        IngressCells {
            cells: vec![IngressCell::default(); ports * CLASSES],
        }
    }

    /// `Mmu::admit` for a frame that fits what is left of its queue's
    /// reserve (the common case): it takes reserve only, and the shared
    /// pool and headroom do not change, so the switch's `Mmu` is not
    /// needed. `false`, changing nothing, if it does not fit.
    #[inline(always)]
    pub fn admit_to_reserve(&mut self, port: u32, prio: u8, bytes: u32) -> bool {
        let cell = &mut self.cells[index(port as usize, prio)];
        let fits = bytes <= cell.reserve_limit - cell.reserve;
        if fits {
            cell.reserve += bytes;
        }
        fits
    }

    /// `Mmu::release` for a queue that holds reserve only (the common
    /// case): the shared pool and headroom do not change. `false`,
    /// changing nothing, if the queue holds shared room or headroom.
    #[inline(always)]
    pub fn release_from_reserve(&mut self, port: u32, prio: u8, bytes: u32) -> bool {
        let u = &mut self.cells[index(port as usize, prio)];
        let reserve_only = u.shared == 0 && u.headroom == 0;
        if reserve_only {
            assert!(
                bytes <= u.reserve,
                "release of {bytes} B not held by ingress ({port}, {prio})"
            );
            u.reserve -= bytes;
        }
        reserve_only
    }

    /// Whether a queue that holds reserve only, as it does after
    /// `admit_to_reserve` or `release_from_reserve`, may have a PFC
    /// decision to change (`Mmu::pfc_change`), where its switch's pool is
    /// `calm` or not (`Mmu::calm`). With no shared room and no headroom
    /// in use, its decision is to pause only at a zero threshold, and
    /// otherwise to resume or keep its state; so a queue PFC does not
    /// hold, in a calm pool, changes nothing. That is known from the cell
    /// alone, without its class: the common case, taken without reading
    /// the class's mode (a branch that follows the mix of lossy and
    /// lossless frames).
    #[inline(always)]
    pub fn may_change_pfc(&self, port: u32, prio: u8, calm: bool) -> bool {
        let cell = &self.cells[index(port as usize, prio)];
        debug_assert!(
            cell.shared == 0 && cell.headroom == 0,
            "ingress ({port}, {prio}) holds reserve only"
        );
        cell.held || !calm
    }

    /// Where the bytes of ingress (`port`, `prio`) sit.
    pub fn used(&self, port: u32, prio: u8) -> IngressUse {
        self.cells[index(port as usize, prio)].used()
    }

    /// PFC holds the upstream of `port` for the priorities in `mask` (bit
    /// c: priority c) and releases the others: the PFC sender's state,
    /// which `Mmu::pfc_change` compares its decisions with.
    pub fn set_held(&mut self, port: u32, mask: u8) {
        for prio in 0..CLASSES as u8 {
            self.cells[index(port as usize, prio)].held = mask & (1 << prio) != 0;
        }
    }

    /// PFC holds the upstream of ingress (`port`, `prio`).
    pub fn held(&self, port: u32, prio: u8) -> bool {
        self.cells[index(port as usize, prio)].held
    }

    /// Port `port`'s cells as `from` has them (a partitioned run gathers
    /// each port from the partition that simulated it).
    pub fn take_port(&mut self, from: &IngressCells, port: usize) {
        let row = index(port, 0)..index(port + 1, 0);
        if row.end <= self.cells.len() {
            self.cells[row.clone()].copy_from_slice(&from.cells[row]);
        }
    }
}

impl Mmu {
    /// The MMU of a switch whose ports, in the order of `spec`'s tables,
    /// have the network-wide numbers `ports`; it sets their cells' limits
    /// in `cells`, which has rows for them.
    pub fn new(spec: &MmuSpec, ports: &[u32], cells: &mut IngressCells) -> Result<Mmu, MmuError> {
        assert_eq!(ports.len(), spec.ports, "one number per port of the spec");
        let pool = spec.shared_pool()?.0;
        for (local, &port) in ports.iter().enumerate() {
            for prio in 0..CLASSES as u8 {
                let i = index(local, prio);
                cells.cells[index(port as usize, prio)] = IngressCell {
                    reserve_limit: spec.reserve[i].0 as u32,
                    headroom_limit: spec.headroom[i].0 as u32,
                    ..IngressCell::default()
                };
            }
        }
        Ok(Mmu {
            ports: ports.into(),
            classes: spec.classes,
            pool,
            nonzero_xoff_free: nonzero_xoff_free(&spec.classes, pool),
            shared_used: 0,
            headroom_used: 0,
        })
    }

    /// A frame of `bytes` arrives on `port` at priority `prio`, bound for
    /// an egress queue of that priority holding `egress_queued` bytes (the
    /// switch's port counts those; the MMU does not keep a copy).
    ///
    /// Its bytes fill the reserve first (a frame may straddle the reserve's
    /// end: the reserve is then exactly full). The rest goes, whole, into
    /// the shared pool if the pool has room and the class's threshold
    /// allows it: for a lossless class, the queue's shared use after the
    /// frame is at most its XOFF threshold; for a lossy class, the egress
    /// queue's bytes after the frame are at most its egress threshold. The
    /// threshold is the one before the frame. Otherwise a lossless rest
    /// goes into headroom if it fits there, and a lossy frame is dropped.
    #[inline]
    pub fn admit(
        &mut self,
        cells: &mut IngressCells,
        port: u32,
        prio: u8,
        bytes: u32,
        egress_queued: u64,
    ) -> Admission {
        if cells.admit_to_reserve(port, prio, bytes) {
            return Admission::Admitted;
        }
        let i = index(port as usize, prio);
        let bytes = bytes as u64;
        let cell = cells.cells[i];
        let used = cell.used();
        let to_reserve = bytes.min((cell.reserve_limit - cell.reserve) as u64);
        let rest = bytes - to_reserve;
        let free = self.pool - self.shared_used;
        let fits_pool = rest <= free;
        let (to_shared, to_headroom) = match self.classes[prio as usize] {
            _ if rest == 0 => (0, 0),
            ClassMode::Lossless { xoff, .. } => {
                if fits_pool && used.shared.0 + rest <= xoff.bytes(free) {
                    (rest, 0)
                } else if used.headroom.0 + rest <= cell.headroom_limit as u64 {
                    (0, rest)
                } else {
                    return Admission::HeadroomOverflow;
                }
            }
            ClassMode::Lossy { egress } => {
                if fits_pool && egress_queued + bytes <= egress.bytes(free) {
                    (rest, 0)
                } else {
                    return Admission::Dropped;
                }
            }
        };
        // Reserve and headroom stay within their 32-bit limits.
        let u = &mut cells.cells[i];
        u.reserve += to_reserve as u32;
        u.shared += to_shared;
        u.headroom += to_headroom as u32;
        self.shared_used += to_shared;
        self.headroom_used += to_headroom;
        Admission::Admitted
    }

    /// A frame admitted from the same port with the same priority has left.
    ///
    /// The counters do not remember which bytes a given frame took: the
    /// bytes come off headroom first, then the shared pool, then the
    /// reserve. Headroom first, because it is the emergency space for the
    /// next pause and its use alone keeps the upstream paused; shared
    /// before reserve, because shared bytes return to the pool that every
    /// other queue (and every dynamic threshold) draws on, while the
    /// reserve is private. The queue's state is then as if it had filled
    /// up to its current level in admission order: it uses shared room or
    /// headroom only with a full reserve.
    #[inline]
    pub fn release(&mut self, cells: &mut IngressCells, port: u32, prio: u8, bytes: u32) {
        if cells.release_from_reserve(port, prio, bytes) {
            return;
        }
        let bytes = bytes as u64;
        let u = &mut cells.cells[index(port as usize, prio)];
        let from_headroom = bytes.min(u.headroom as u64);
        let from_shared = (bytes - from_headroom).min(u.shared);
        let from_reserve = bytes - from_headroom - from_shared;
        assert!(
            from_reserve <= u.reserve as u64,
            "release of {bytes} B not held by ingress ({port}, {prio})"
        );
        u.headroom -= from_headroom as u32;
        u.shared -= from_shared;
        u.reserve -= from_reserve as u32;
        self.shared_used -= from_shared;
        self.headroom_used -= from_headroom;
    }

    /// Whether ingress (`port`, `prio`) should be paused: `Some(true)`
    /// when its headroom is in use or its shared use has reached its XOFF
    /// threshold; `Some(false)` when its headroom is empty and its shared
    /// use plus the resume offset is at most the threshold; `None` in
    /// between (keep the current state) and for lossy priorities. If both
    /// hold (a zero offset at the threshold), pausing wins.
    ///
    /// A dynamic threshold moves with every change of the shared pool's
    /// use, so any admission or release may change the answer for every
    /// lossless ingress queue of the switch, not only the one it touched.
    #[inline(always)]
    pub fn pfc_decision(&self, cells: &IngressCells, port: u32, prio: u8) -> Option<bool> {
        let ClassMode::Lossless {
            xoff,
            resume_offset,
        } = self.classes[prio as usize]
        else {
            return None;
        };
        let u = cells.used(port, prio);
        let threshold = xoff.bytes(self.pool - self.shared_used);
        if u.headroom.0 > 0 || u.shared.0 >= threshold {
            Some(true)
        } else if u.shared.0 + resume_offset.0 <= threshold {
            Some(false)
        } else {
            None
        }
    }

    /// `pfc_decision` where it differs from what PFC holds now: `Some(true)`
    /// to pause ingress (`port`, `prio`), `Some(false)` to resume it,
    /// `None` to leave it. Lossy priorities return at the first test.
    #[inline(always)]
    pub fn pfc_change(&self, cells: &IngressCells, port: u32, prio: u8) -> Option<bool> {
        let hold = self.pfc_decision(cells, port, prio)?;
        (hold != cells.held(port, prio)).then_some(hold)
    }

    /// Enough of the pool is free for every lossless class's XOFF
    /// threshold to be above zero (`IngressCells::may_change_pfc`). It
    /// changes only with the pool's use: the engine keeps a copy per
    /// switch, refreshed after each admission into the pool and release
    /// from it, so that a frame within its reserve does not read the MMU.
    pub fn calm(&self) -> bool {
        self.pool - self.shared_used >= self.nonzero_xoff_free
    }

    /// The XOFF threshold of a lossless priority now (on shared use).
    pub fn xoff_threshold(&self, prio: u8) -> Option<Bytes> {
        match self.classes[prio as usize] {
            ClassMode::Lossless { xoff, .. } => Some(Bytes(xoff.bytes(self.free().0))),
            ClassMode::Lossy { .. } => None,
        }
    }

    /// The egress threshold of a lossy priority now (on egress bytes).
    pub fn egress_threshold(&self, prio: u8) -> Option<Bytes> {
        match self.classes[prio as usize] {
            ClassMode::Lossy { egress } => Some(Bytes(egress.bytes(self.free().0))),
            ClassMode::Lossless { .. } => None,
        }
    }

    /// Size of the shared pool.
    pub fn shared_pool(&self) -> Bytes {
        Bytes(self.pool)
    }

    /// Bytes of the shared pool in use.
    pub fn shared_used(&self) -> Bytes {
        Bytes(self.shared_used)
    }

    /// Bytes of headroom in use, over every ingress queue.
    pub fn headroom_used(&self) -> Bytes {
        Bytes(self.headroom_used)
    }

    /// Bytes of the shared pool not in use.
    pub fn free(&self) -> Bytes {
        Bytes(self.pool - self.shared_used)
    }

    /// Bytes held, over the switch's ingress queues (a scan, for checks).
    pub fn held(&self, cells: &IngressCells) -> Bytes {
        let held = |&port: &u32| -> u64 {
            (0..CLASSES as u8)
                .map(|prio| cells.used(port, prio).total().0)
                .sum()
        };
        Bytes(self.ports.iter().map(held).sum())
    }

    /// The switch's ports, network-wide numbers in the order of its spec.
    pub fn ports(&self) -> &[u32] {
        &self.ports
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOSSY: ClassMode = ClassMode::Lossy {
        egress: Threshold::Dynamic(Alpha::ONE),
    };

    fn lossless(xoff: Threshold, resume_offset: u64) -> ClassMode {
        ClassMode::Lossless {
            xoff,
            resume_offset: Bytes(resume_offset),
        }
    }

    /// An MMU with its ingress cells and the egress queues it admits
    /// into: the engine's ports count those bytes, here a table does. Its
    /// ports are numbered 0, 1, … in the network of its cells, and 2 is
    /// another switch's, which it leaves alone.
    struct Switch {
        mmu: Mmu,
        cells: IngressCells,
        egress: Vec<u64>,
    }

    /// A port of the network that is not the switch's.
    const OTHER: u32 = 2;

    impl Switch {
        fn new(spec: &MmuSpec) -> Result<Switch, MmuError> {
            let ports: Vec<u32> = (0..spec.ports as u32)
                .map(|p| if p < OTHER { p } else { p + 1 })
                .collect();
            let mut cells = IngressCells::new(spec.ports + 1);
            let mmu = Mmu::new(spec, &ports, &mut cells)?;
            Ok(Switch {
                mmu,
                cells,
                egress: vec![0; spec.ports * CLASSES],
            })
        }

        /// Network-wide number of the switch's port `local`.
        fn port(&self, local: usize) -> u32 {
            self.mmu.ports()[local]
        }

        fn admit(&mut self, from: usize, to: usize, prio: u8, bytes: u32) -> Admission {
            let e = index(to, prio);
            let from = self.port(from);
            let a = self
                .mmu
                .admit(&mut self.cells, from, prio, bytes, self.egress[e]);
            if a == Admission::Admitted {
                self.egress[e] += bytes as u64;
            }
            a
        }

        fn release(&mut self, from: usize, to: usize, prio: u8, bytes: u32) {
            let from = self.port(from);
            self.mmu.release(&mut self.cells, from, prio, bytes);
            self.egress[index(to, prio)] -= bytes as u64;
        }

        fn admit_to_reserve(&mut self, from: usize, prio: u8, bytes: u32) -> bool {
            let from = self.port(from);
            self.cells.admit_to_reserve(from, prio, bytes)
        }

        fn release_from_reserve(&mut self, from: usize, prio: u8, bytes: u32) -> bool {
            let from = self.port(from);
            self.cells.release_from_reserve(from, prio, bytes)
        }

        fn egress(&self, port: usize, prio: u8) -> Bytes {
            Bytes(self.egress[index(port, prio)])
        }

        fn ingress(&self, port: usize, prio: u8) -> IngressUse {
            self.cells.used(self.port(port), prio)
        }

        fn pfc_decision(&self, port: usize, prio: u8) -> Option<bool> {
            self.mmu.pfc_decision(&self.cells, self.port(port), prio)
        }

        fn pfc_change(&self, port: usize, prio: u8) -> Option<bool> {
            self.mmu.pfc_change(&self.cells, self.port(port), prio)
        }

        /// The engine's test for a queue holding reserve only: no change
        /// unless the cell says there may be one.
        fn pfc_change_reserve_only(&self, port: usize, prio: u8) -> Option<bool> {
            let calm = self.mmu.calm();
            if !self.cells.may_change_pfc(self.port(port), prio, calm) {
                return None;
            }
            self.pfc_change(port, prio)
        }

        fn set_held(&mut self, port: usize, mask: u8) {
            let port = self.port(port);
            self.cells.set_held(port, mask);
        }

        fn is_held(&self, port: usize, prio: u8) -> bool {
            self.cells.held(self.port(port), prio)
        }

        fn held(&self) -> Bytes {
            self.mmu.held(&self.cells)
        }

        fn ports(&self) -> usize {
            self.mmu.ports().len()
        }
    }

    impl std::ops::Deref for Switch {
        type Target = Mmu;
        fn deref(&self) -> &Mmu {
            &self.mmu
        }
    }

    /// Priority 3 lossless with `class3`, priority 0 lossy with `class0`,
    /// the others lossy.
    fn mmu(
        total: u64,
        ports: usize,
        class0: ClassMode,
        class3: ClassMode,
        reserve: u64,
        headroom: u64,
    ) -> Switch {
        let mut classes = [LOSSY; CLASSES];
        classes[0] = class0;
        classes[3] = class3;
        Switch::new(&MmuSpec::uniform(
            Bytes(total),
            ports,
            classes,
            Bytes(reserve),
            Bytes(headroom),
        ))
        .unwrap()
    }

    #[test]
    fn the_shared_pool_is_what_reserves_and_headroom_leave() {
        // 4 ports × 8 priorities × 1000 B reserve, 4 ports × 1 lossless
        // priority × 20,000 B headroom.
        let m = mmu(
            1_000_000,
            4,
            LOSSY,
            lossless(Threshold::Dynamic(Alpha::ONE), 0),
            1000,
            20_000,
        );
        assert_eq!(m.shared_pool(), Bytes(1_000_000 - 32_000 - 80_000));
        let mut classes = [LOSSY; CLASSES];
        classes[3] = lossless(Threshold::Dynamic(Alpha::ONE), 0);
        let over = MmuSpec::uniform(Bytes(100_000), 4, classes, Bytes(1000), Bytes(20_000));
        assert!(matches!(
            over.shared_pool(),
            Err(MmuError::Overcommitted { .. })
        ));
        let mut lossy_headroom = over.clone();
        lossy_headroom.total = Bytes(1_000_000);
        lossy_headroom.headroom[8 + 1] = Bytes(1);
        assert_eq!(
            lossy_headroom.shared_pool().unwrap_err(),
            MmuError::HeadroomOnLossy {
                port: 1,
                prio: 1,
                bytes: Bytes(1)
            }
        );
    }

    /// A queue's reserve and headroom are kept in 32 bits: 4 GiB fits,
    /// a byte more is refused (naming the queue), even in a buffer large
    /// enough to hold it.
    #[test]
    fn a_queue_may_reserve_up_to_4_gib() {
        let gib4 = u32::MAX as u64;
        let mut classes = [LOSSY; CLASSES];
        classes[3] = lossless(Threshold::Dynamic(Alpha::ONE), 0);
        let mut spec = MmuSpec::uniform(Bytes(1 << 40), 2, classes, Bytes(0), Bytes(0));
        spec.reserve[8 + 2] = Bytes(gib4);
        spec.headroom[3] = Bytes(gib4);
        let mut m = Switch::new(&spec).unwrap();
        assert_eq!(m.admit(1, 0, 2, 1500), Admission::Admitted);
        assert_eq!(m.ingress(1, 2).reserve, Bytes(1500));
        spec.reserve[8 + 2] = Bytes(gib4 + 1);
        assert_eq!(
            spec.shared_pool().unwrap_err(),
            MmuError::QueueTooLarge {
                table: "reserve",
                port: 1,
                prio: 2,
                bytes: Bytes(gib4 + 1)
            }
        );
        spec.reserve[8 + 2] = Bytes(0);
        spec.headroom[3] = Bytes(gib4 + 1);
        assert!(matches!(
            spec.shared_pool(),
            Err(MmuError::QueueTooLarge {
                table: "headroom",
                port: 0,
                prio: 3,
                ..
            })
        ));
    }

    #[test]
    fn the_dynamic_threshold_is_alpha_times_the_free_pool_as_it_fills() {
        for alpha in [Alpha::new(1, 8), Alpha::ONE] {
            // No reserve: every byte goes to the shared pool.
            let mut m = mmu(
                800_000,
                4,
                LOSSY,
                lossless(Threshold::Dynamic(alpha), 0),
                0,
                50_000,
            );
            let pool = m.shared_pool().0;
            assert_eq!(pool, 800_000 - 4 * 50_000);
            assert_eq!(m.xoff_threshold(3), Some(Bytes(alpha.of(pool))));
            // Other ingress ports fill the pool; the threshold of every
            // queue falls with it.
            let mut used = 0;
            for step in 0..200 {
                let port = 1 + step % 3;
                if m.admit(port, 0, 3, 1000) != Admission::Admitted
                    || m.ingress(port, 3).headroom.0 > 0
                {
                    break;
                }
                used += 1000;
                assert_eq!(m.shared_used(), Bytes(used));
                let want = (pool - used) * alpha.num as u64 / alpha.den as u64;
                assert_eq!(
                    m.xoff_threshold(3),
                    Some(Bytes(want)),
                    "α {alpha:?}, {used} B used"
                );
            }
            assert!(used > 0);
        }
    }

    #[test]
    fn a_single_ingress_saturates_at_alpha_over_one_plus_alpha_of_the_pool() {
        for (alpha, share) in [(Alpha::new(1, 8), 1.0 / 9.0), (Alpha::ONE, 0.5)] {
            let mut m = mmu(
                1_000_000,
                2,
                LOSSY,
                lossless(Threshold::Dynamic(alpha), 0),
                0,
                100_000,
            );
            let pool = m.shared_pool().0;
            let frame = 1000;
            while m.ingress(0, 3).headroom.0 == 0 {
                assert_eq!(m.admit(0, 1, 3, frame), Admission::Admitted);
            }
            let s = m.ingress(0, 3).shared.0 as f64;
            let target = share * pool as f64;
            assert!(
                (s - target).abs() <= frame as f64,
                "α {alpha:?}: {s} vs {target}"
            );
            assert_eq!(m.pfc_decision(0, 3), Some(true));
        }
    }

    /// Two ports, priority 3 lossless with a static XOFF threshold of
    /// 10,000 B of shared use and a resume offset of 3,000 B, 2,000 B of
    /// reserve and 10,000 B of headroom per ingress queue.
    fn static_xoff() -> Switch {
        mmu(
            1_000_000,
            2,
            LOSSY,
            lossless(Threshold::Static(Bytes(10_000)), 3000),
            2000,
            10_000,
        )
    }

    #[test]
    fn xoff_at_the_threshold_and_xon_only_an_offset_below_it() {
        let mut m = static_xoff();
        let mut decisions = Vec::new();
        for _ in 0..12 {
            m.admit(0, 1, 3, 1000);
            decisions.push((m.ingress(0, 3).shared.0, m.pfc_decision(0, 3)));
        }
        // Two frames fill the reserve; then shared use grows by 1000 a frame.
        assert_eq!(decisions[0], (0, Some(false)));
        assert_eq!(decisions[1], (0, Some(false)));
        for &(s, d) in &decisions[2..] {
            let want = match s {
                s if s >= 10_000 => Some(true),
                s if s <= 7000 => Some(false),
                _ => None,
            };
            assert_eq!(d, want, "shared use {s}");
        }
        assert_eq!(decisions[11], (10_000, Some(true)));
        // Draining: paused until shared use is at most 7,000 B.
        let mut resumed_at = None;
        while m.ingress(0, 3).total().0 > 0 {
            m.release(0, 1, 3, 1000);
            let s = m.ingress(0, 3).shared.0;
            if m.pfc_decision(0, 3) == Some(false) && resumed_at.is_none() {
                resumed_at = Some(s);
            }
            if s > 7000 {
                assert_ne!(m.pfc_decision(0, 3), Some(false), "shared use {s}");
            }
        }
        assert_eq!(resumed_at, Some(7000));
        // A lossy priority is never paused.
        assert_eq!(m.pfc_decision(0, 0), None);
    }

    #[test]
    fn pfc_change_reports_a_decision_only_where_it_differs_from_what_is_held() {
        let mut m = static_xoff();
        // Within its reserve and far below XOFF: resume, which it is.
        m.admit(0, 1, 3, 1000);
        assert_eq!(m.pfc_decision(0, 3), Some(false));
        assert_eq!(m.pfc_change(0, 3), None);
        // At XOFF: pause, until PFC holds it.
        while m.ingress(0, 3).shared.0 < 10_000 {
            m.admit(0, 1, 3, 1000);
        }
        assert_eq!(m.pfc_change(0, 3), Some(true));
        m.set_held(0, 1 << 3);
        assert_eq!(m.pfc_change(0, 3), None);
        // Between XON and XOFF nothing changes; at XON it resumes.
        m.release(0, 1, 3, 1000);
        assert_eq!(m.pfc_decision(0, 3), None);
        assert_eq!(m.pfc_change(0, 3), None);
        while m.ingress(0, 3).shared.0 > 7000 {
            m.release(0, 1, 3, 1000);
        }
        assert_eq!(m.pfc_change(0, 3), Some(false));
        // Holding one priority of a port says nothing of another, nor of
        // another port; a lossy priority never changes.
        assert!(!m.is_held(0, 2) && !m.is_held(1, 3));
        m.set_held(0, 0);
        assert_eq!(m.pfc_change(0, 3), None);
        assert_eq!(m.pfc_change(0, 0), None);
    }

    #[test]
    fn the_reserve_paths_take_only_what_fits_and_give_back_only_reserve() {
        let mut m = static_xoff();
        assert!(m.admit_to_reserve(0, 3, 1500));
        // 500 B of reserve left: a 1000-B frame does not fit and changes nothing.
        assert!(!m.admit_to_reserve(0, 3, 1000));
        assert_eq!(m.ingress(0, 3).reserve, Bytes(1500));
        assert_eq!(m.admit(0, 0, 3, 1000), Admission::Admitted);
        let u = m.ingress(0, 3);
        assert_eq!((u.reserve, u.shared), (Bytes(2000), Bytes(500)));
        // A queue holding shared room does not release from its reserve.
        assert!(!m.release_from_reserve(0, 3, 1000));
        m.release(0, 0, 3, 1000);
        assert_eq!(
            (m.ingress(0, 3).reserve, m.shared_used()),
            (Bytes(1500), Bytes(0))
        );
        assert!(m.release_from_reserve(0, 3, 1500));
        assert_eq!(m.held(), Bytes(0));
    }

    #[test]
    fn headroom_absorbs_frames_after_xoff_then_overflows() {
        let mut m = mmu(
            1_000_000,
            2,
            LOSSY,
            lossless(Threshold::Static(Bytes(5000)), 1000),
            1000,
            4500,
        );
        for _ in 0..6 {
            assert_eq!(m.admit(0, 1, 3, 1000), Admission::Admitted);
        }
        assert_eq!(
            m.ingress(0, 3),
            IngressUse {
                reserve: Bytes(1000),
                shared: Bytes(5000),
                headroom: Bytes(0)
            }
        );
        assert_eq!(m.pfc_decision(0, 3), Some(true));
        // Frames still in flight after XOFF land in headroom.
        for k in 1..=4 {
            assert_eq!(m.admit(0, 1, 3, 1000), Admission::Admitted);
            assert_eq!(m.ingress(0, 3).headroom, Bytes(k * 1000));
            assert_eq!(m.shared_used(), Bytes(5000));
        }
        // 500 B of headroom left: a 1000 B frame is a violation and is not
        // counted; a 500 B one still fits.
        let before = m.ingress(0, 3);
        assert_eq!(m.admit(0, 1, 3, 1000), Admission::HeadroomOverflow);
        assert_eq!(m.ingress(0, 3), before);
        assert_eq!(m.egress(1, 3), Bytes(10_000));
        assert_eq!(m.admit(0, 1, 3, 500), Admission::Admitted);
        assert_eq!(m.ingress(0, 3).headroom, Bytes(4500));
        // While headroom is in use the queue stays paused.
        m.release(0, 1, 3, 4000);
        assert_eq!(m.ingress(0, 3).headroom, Bytes(500));
        assert_eq!(m.pfc_decision(0, 3), Some(true));
    }

    #[test]
    fn the_reserve_fills_first_and_a_frame_may_straddle_its_end() {
        let mut m = mmu(
            1_000_000,
            2,
            LOSSY,
            lossless(Threshold::Dynamic(Alpha::ONE), 0),
            2500,
            10_000,
        );
        m.admit(0, 1, 3, 1000);
        m.admit(0, 1, 3, 1000);
        assert_eq!(m.ingress(0, 3).reserve, Bytes(2000));
        assert_eq!(m.shared_used(), Bytes(0));
        m.admit(0, 1, 3, 1000);
        assert_eq!(
            m.ingress(0, 3),
            IngressUse {
                reserve: Bytes(2500),
                shared: Bytes(500),
                headroom: Bytes(0)
            }
        );
        assert_eq!(m.shared_used(), Bytes(500));
        // Another (port, priority) has its own reserve.
        m.admit(1, 0, 3, 1000);
        m.admit(0, 1, 0, 1000);
        assert_eq!(m.ingress(1, 3).reserve, Bytes(1000));
        assert_eq!(m.ingress(0, 0).reserve, Bytes(1000));
        assert_eq!(m.shared_used(), Bytes(500));
        // Release takes shared bytes back first.
        m.release(0, 1, 3, 1000);
        assert_eq!(
            m.ingress(0, 3),
            IngressUse {
                reserve: Bytes(2000),
                shared: Bytes(0),
                headroom: Bytes(0)
            }
        );
    }

    #[test]
    fn lossy_frames_drop_at_the_egress_threshold_while_lossless_ones_are_admitted() {
        // Priority 0 lossy with a static 5,000 B egress threshold; priority
        // 3 lossless with a generous threshold. Both to output port 2.
        let egress = ClassMode::Lossy {
            egress: Threshold::Static(Bytes(5000)),
        };
        let mut m = mmu(
            1_000_000,
            3,
            egress,
            lossless(Threshold::Dynamic(Alpha::ONE), 0),
            1000,
            20_000,
        );
        let mut admitted = 0;
        for _ in 0..10 {
            if m.admit(0, 2, 0, 1000) == Admission::Admitted {
                admitted += 1;
            }
        }
        assert_eq!(admitted, 5);
        assert_eq!(m.egress(2, 0), Bytes(5000));
        assert_eq!(
            m.admit(1, 2, 0, 1000),
            Admission::Admitted,
            "another input's reserve"
        );
        assert_eq!(m.admit(1, 2, 0, 1000), Admission::Dropped);
        for _ in 0..10 {
            assert_eq!(m.admit(0, 2, 3, 1000), Admission::Admitted);
        }
        assert_eq!(m.egress(2, 3), Bytes(10_000));
        assert_eq!(m.egress(2, 0), Bytes(6000));
    }

    #[test]
    fn a_dynamic_egress_threshold_is_alpha_egress_times_the_free_pool() {
        let egress = ClassMode::Lossy {
            egress: Threshold::Dynamic(Alpha::new(1, 2)),
        };
        let mut m = mmu(
            100_000,
            2,
            egress,
            lossless(Threshold::Dynamic(Alpha::ONE), 0),
            0,
            0,
        );
        let pool = m.shared_pool().0;
        assert_eq!(pool, 100_000);
        let mut held = 0;
        while m.admit(0, 1, 0, 1000) == Admission::Admitted {
            held += 1000;
            assert_eq!(m.egress_threshold(0), Some(Bytes((pool - held) / 2)));
        }
        // Admitted while q + 1000 <= (pool - q) / 2: q settles at a third.
        assert_eq!(held, 33_000);
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Admit {
                from: usize,
                to: usize,
                prio: u8,
                bytes: u32,
            },
            /// Release the held frame at this position (modulo their count).
            Release(usize),
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                3 => (0..3usize, 0..3usize, prop_oneof![Just(0u8), Just(3u8), Just(5u8)], 64..9000u32)
                    .prop_map(|(from, to, prio, bytes)| Op::Admit { from, to, prio, bytes }),
                2 => any::<usize>().prop_map(Op::Release),
            ]
        }

        /// Admit or release as `op` says; `held` lists the admitted frames
        /// (from, to, priority, bytes).
        fn apply(m: &mut Switch, op: Op, held: &mut Vec<(usize, usize, u8, u32)>) {
            match op {
                Op::Admit {
                    from,
                    to,
                    prio,
                    bytes,
                } => {
                    if m.admit(from, to, prio, bytes) == Admission::Admitted {
                        held.push((from, to, prio, bytes));
                    }
                }
                Op::Release(k) if !held.is_empty() => {
                    let (from, to, prio, bytes) = held.swap_remove(k % held.len());
                    m.release(from, to, prio, bytes);
                }
                Op::Release(_) => {}
            }
        }

        fn check(m: &Switch, held: &[(usize, usize, u8, u32)], spec: &MmuSpec) {
            let bytes: u64 = held.iter().map(|h| h.3 as u64).sum();
            assert_eq!(m.held(), Bytes(bytes));
            let mut egress = 0;
            let mut shared = 0;
            for port in 0..m.ports() {
                for prio in 0..CLASSES as u8 {
                    let i = index(port, prio);
                    let u = m.ingress(port, prio);
                    assert!(u.reserve <= spec.reserve[i]);
                    assert!(u.headroom <= spec.headroom[i]);
                    // Shared room and headroom only with a full reserve.
                    if u.shared.0 > 0 || u.headroom.0 > 0 {
                        assert_eq!(u.reserve, spec.reserve[i]);
                    }
                    let want: u64 = held
                        .iter()
                        .filter(|h| h.0 == port && h.2 == prio)
                        .map(|h| h.3 as u64)
                        .sum();
                    assert_eq!(u.total(), Bytes(want));
                    egress += m.egress(port, prio).0;
                    shared += u.shared.0;
                }
            }
            assert_eq!(egress, bytes);
            assert_eq!(m.shared_used(), Bytes(shared));
            // Another switch's port in the same table is left alone.
            for prio in 0..CLASSES as u8 {
                assert_eq!(m.cells.used(OTHER, prio).total(), Bytes(0));
                assert!(!m.cells.held(OTHER, prio));
            }
            assert!(m.shared_used() <= m.shared_pool());
        }

        proptest! {
            #[test]
            fn release_restores_every_counter(ops in prop::collection::vec(op(), 1..300)) {
                let mut classes = [LOSSY; CLASSES];
                classes[0] = ClassMode::Lossy { egress: Threshold::Static(Bytes(30_000)) };
                classes[3] = lossless(Threshold::Dynamic(Alpha::new(1, 4)), 3000);
                classes[5] = lossless(Threshold::Static(Bytes(20_000)), 2000);
                let spec = MmuSpec::uniform(Bytes(200_000), 3, classes, Bytes(3000), Bytes(15_000));
                let mut m = Switch::new(&spec).unwrap();
                let mut held = Vec::new();
                for op in ops {
                    apply(&mut m, op, &mut held);
                    check(&m, &held, &spec);
                }
                for (from, to, prio, bytes) in held.drain(..) {
                    m.release(from, to, prio, bytes);
                }
                check(&m, &held, &spec);
                prop_assert_eq!(m.shared_used(), Bytes(0));
            }

            /// The shortcut for queues holding reserve only agrees with the
            /// full decision, as the pool fills to where thresholds reach
            /// zero and with PFC holding any mix of queues.
            #[test]
            fn the_reserve_only_shortcut_agrees_with_the_decision(
                ops in prop::collection::vec((op(), any::<(usize, u8)>()), 1..200),
                xoff in prop_oneof![
                    Just(Threshold::Dynamic(Alpha::new(1, 128))),
                    Just(Threshold::Dynamic(Alpha::new(3, 1000))),
                    Just(Threshold::Static(Bytes(0))),
                    Just(Threshold::Static(Bytes(4000))),
                ],
                resume in 0..5000u64,
            ) {
                let mut classes = [LOSSY; CLASSES];
                classes[3] = lossless(xoff, resume);
                classes[5] = lossless(Threshold::Dynamic(Alpha::new(1, 64)), 1000);
                let spec = MmuSpec::uniform(Bytes(100_000), 3, classes, Bytes(1000), Bytes(9000));
                let mut m = Switch::new(&spec).unwrap();
                let mut held = Vec::new();
                for (op, (port, mask)) in ops {
                    apply(&mut m, op, &mut held);
                    m.set_held(port % 3, mask);
                    for port in 0..3 {
                        for prio in 0..CLASSES as u8 {
                            let u = m.ingress(port, prio);
                            if u.shared.0 == 0 && u.headroom.0 == 0 {
                                prop_assert_eq!(
                                    m.pfc_change_reserve_only(port, prio),
                                    m.pfc_change(port, prio),
                                    "ingress ({}, {}) with {} B free", port, prio, m.free().0
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_lossless_threshold_is_above_zero_from_the_least_free_pool() {
        let with = |xoff: Threshold, pool: u64| {
            let mut classes = [LOSSY; CLASSES];
            classes[3] = lossless(xoff, 0);
            classes[5] = lossless(Threshold::Dynamic(Alpha::new(1, 2)), 0);
            nonzero_xoff_free(&classes, pool)
        };
        // α = 1/8: 8 B free give a 1 B threshold, 7 B give none.
        assert_eq!(with(Threshold::Dynamic(Alpha::new(1, 8)), 1 << 20), 8);
        // α = 3/8: 3 B give ⌊9/8⌋ = 1 B; the other class (1/2) needs 2.
        assert_eq!(with(Threshold::Dynamic(Alpha::new(3, 8)), 1 << 20), 3);
        assert_eq!(with(Threshold::Dynamic(Alpha::new(1, 1000)), 1 << 20), 1000);
        // A static threshold is above zero at any free pool, or never.
        assert_eq!(with(Threshold::Static(Bytes(5)), 1 << 20), 2);
        assert_eq!(with(Threshold::Static(Bytes(0)), 1 << 20), u64::MAX);
        // A pool too small for the threshold ever to be above zero.
        assert_eq!(with(Threshold::Dynamic(Alpha::new(1, 8)), 7), u64::MAX);
        assert_eq!(nonzero_xoff_free(&[LOSSY; CLASSES], 1 << 20), 0);
    }
}
