"""Replaying a recorded step: one signature's program, its statements bound to a call's
arrays, run by their kept compiled forms, in runs whose messages travel together."""

from __future__ import annotations

import itertools
import operator
import weakref

import numpy as np

from ... import comm
from ...comm import check
from ...comm import trace
from ...exec import chain, fperr, fuse, merged, persistent, settings
from ...exec import statement as engine_statement
from ...exec.calibration import current as current_model
from ...exec.lowered import Lowered
from .. import engine, statements
from ..lowering import structure
from ..view import View
from .conflicts import conflict, moved_arrays
from .record import SCALARS, Recorded, Stmt, all_bases, detach, rebuild, substitute, text
from .watch import identical

_MASK = (1 << 62) - 1
_NONE = itertools.repeat(None)

#: Off: every replayed statement exchanges its own messages (to compare, and for tests).
MERGE = True
#: Replays by the same kept repeats before consecutive statements are made into chains
#: (:mod:`pgas.exec.chain`); None: never.
CHAIN_AFTER = 8


# -- programs ----------------------------------------------------------------------------
class Program:
    """One signature's recording: its statements, or why it runs ``fn`` plainly."""

    def __init__(self, fn, args, stmts, watch, reason) -> None:
        self.fn, self.stmts, self.watch, self.reason = fn, stmts, watch, reason
        self.fixed: list = []
        #: Per statement ``(stmt, getter, one)``: its arrays picked from the call's arguments
        #: followed by :attr:`fixed` (:meth:`_picks`), made at the first call that binds again.
        self.picks: list | None = None
        #: Weak references to the arrays of the last binding (:meth:`_bind`): the step keeps
        #: no argument array alive between calls (:meth:`_let_go`).
        self.bound: tuple | None = None
        #: ``(settings key, per statement its Kept repeat or None)`` (:meth:`_keep`), or None.
        self.kept = None
        #: Runs of consecutive statements whose transfers travel together (:meth:`_group`):
        #: ``[first, end, Replays or None, exchange, why the run ends]``, made for
        #: ``merge_key`` (the settings' version and calibrated model), None until made.
        self.groups: list | None = None
        self.merge_key = None
        self.merging = False                            # whether a run of ``groups`` merges anything
        #: What a replay by ``groups`` runs (:meth:`_units`): ``[first, end, group or None,
        #: repeat]``, a merged run (its entry of ``groups``) or one statement, each with its
        #: repeat with nothing looked up (:class:`pgas.exec.merged.Kept`, None until made),
        #: made under ``units_key`` (:func:`pgas.exec.persistent.settings_key`).
        self.units: list = []
        self.units_key = None
        self.param_fills: list = []                     # fills whose value is an argument
        #: ``(kept, {first: (end, Chain, repeats)})``: runs of statements replayed as one
        #: compiled call (:meth:`_chains`) for the repeats ``kept`` holds, None until made.
        self.chains = None
        self.replays = 0                                # replays by kept repeats since they were kept
        #: What :meth:`_fold` folds for the bound arrays and the scalar values ``fold_vals``
        #: (:func:`pgas.comm.check.repeat_tag`), None until made.
        self.fold_tag = None
        self.fold_vals: tuple = ()
        self.shape = tuple(type(a).__name__ if isinstance(a, SCALARS) else "array" for a in args)
        self.params = [k for k, a in enumerate(args) if isinstance(a, SCALARS)]
        self.arrays_at = [k for k, a in enumerate(args) if engine.is_array(a)]
        self.fills = any(s.fill for s in stmts)
        self.kept_vals: list = []                       # per statement of ``kept``: see _keep
        #: The statements (not fills) with parameters in their programs.
        self.with_params = [k for k, s in enumerate(stmts) if s.params and not s.fill]
        self.hash = check.stable_hash((getattr(fn, "__qualname__", ""), len(stmts),
                                       tuple((s.casting, s.fill, len(s.srcs)) for s in stmts)))
        if reason is None:
            for s in stmts:                              # fixed arrays: held by the watch, by identity
                s.srcs = [k if k >= 0 else -1 - self._fix(b) for k, b in zip(s.srcs, all_bases(s))]
            stand: dict = {}                             # the recording call's arrays: not held
            for s in stmts:
                for k, b in zip(s.srcs, all_bases(s)):
                    if k >= 0 and id(b) not in stand:
                        stand[id(b)] = Recorded(b)
            for s in stmts:
                detach(s, stand)

    def _fix(self, base) -> int:
        for k, b in enumerate(self.fixed):
            if b is base:
                return k
        self.fixed.append(base)
        return len(self.fixed) - 1

    def current(self) -> bool:
        return self.watch.same()

    def first_run(self, args) -> None:
        """Run the statements one by one the usual way (as ``fn`` would), keeping their
        compiled forms."""
        self._bind(args)
        vals = list(args)
        try:
            for s in self.stmts:
                self._slow(s, args, vals)
        finally:
            self._unbind()
        self.free_groups()

    def free_groups(self) -> None:
        """Forget the runs of statements sharing an exchange, freeing their transfers."""
        for g in self.groups or ():
            if g[3] is not None:
                g[3].free()
        self.groups = None
        self.units = []

    def _bind(self, args) -> bool:
        """Bind the statements to ``args``' arrays; False (nothing bound) where an argument
        is an array that the recording read from a global or closure variable: the
        statements' arrays would alias where they did not when recorded."""
        for s in self.stmts:
            bases = [args[k] if k >= 0 else self.fixed[-1 - k] for k in s.srcs]
            if len({id(b) for b in bases}) < len(bases):
                self.bound = None
                return False
            s.bases = bases
        self.kept = self.chains = None
        self.units_key = None                           # (the repeats held the last binding's arrays)
        self.fold_tag = None                            # (:meth:`_fold`'s entry names the arrays)
        me = weakref.ref(self)
        bound: list = []

        def gone(_, me=me, bound=bound) -> None:
            prog = me()
            if prog is not None and prog.bound is bound:
                prog._let_go()
        bound.extend([weakref.ref(a, gone) for a in args if engine.is_array(a)])
        self.bound = bound
        return True

    def _picks(self, nargs: int) -> list:
        """:attr:`picks` for calls of ``nargs`` arguments (the signature's count): a call with
        the last binding's arrays binds the statements again by one ``itemgetter`` each
        (:meth:`replay`; :meth:`_unbind` let them go after the last call)."""
        self.picks = [(s, operator.itemgetter(*[k if k >= 0 else nargs - 1 - k for k in s.srcs]), len(s.srcs) == 1)
                      for s in self.stmts if s.srcs]
        return self.picks

    def _unbind(self) -> None:
        """After a call: the statements hold the call's arrays no more (:attr:`bound` holds
        them weakly; the next call with the same arrays binds them again, :meth:`_picks`)."""
        for s in self.stmts:
            s.bases = None

    def _let_go(self) -> None:
        """An array of the last binding was collected (a weak reference's callback, on any
        thread, between calls: a call's arguments are alive while it runs): forget what holds
        the binding's storage (the repeats' kernel calls and views, the chains), so that its
        windows are released (:mod:`pgas.comm.window`) as without the step.  Nothing is sent:
        the next call binds its own arrays on every locale (its arguments are not the
        collected ones), which drops the same things (:meth:`_bind`)."""
        self.bound = None
        self.kept = self.chains = None
        self.kept_vals = []
        self.fold_tag = None
        for u in self.units:
            u[3] = None

    def _slow(self, s: Stmt, args, vals) -> None:
        """Run statement ``s`` the usual way on the call's arrays and values, and keep its
        compiled form if it made one."""
        swap = {id(b): a for b, a in zip(all_bases(s), s.bases)}
        t = s.target
        target = View(s.bases[0], t.shape, t.M, t.c)
        value = rebuild(s.value, swap, vals)
        if s.fill and not isinstance(value, np.generic):
            value = engine._python_value(target, value)
        if s.casting == "same_kind":
            try:
                statements.assign(target, value, "same_kind")
            finally:
                engine.used(value)
        else:
            engine.assign(target, value, s.casting)
        known = structure(target, value)
        s.r = None
        s.how = "runs the usual way: its statement has no recorded compiled form"
        if known is not None:
            key = known[0] if not s.fill else (*known[0][:3], "fill", value.dtype)
            r = persistent._replays.get(key)
            if r is not None and r.fs is not None and len(r.refs) == len(known[1]) and all(
                    w() is b for w, b in zip(r.refs, known[1])):
                s.r, s.prog, s.vals = r, None, None
                s.how = "replays its compiled form (persistent transfers, kept kernel calls)"
            elif r is None or r.fs is None:
                s.how = "runs the usual way: it does not run by persistent transfers (pgas.exec.persistent)"

    def replay(self, args, stats) -> bool:
        """Run the recording on ``args`` (its signature's); where they alias an array the
        recording reads from a global (:meth:`_bind`), run the function plainly."""
        bound = self.bound
        if bound is not None:
            for k, a in zip(self.arrays_at, bound):      # (the signature's: the same places)
                if args[k] is not a():
                    bound = None
                    break
        if bound is None:
            if not self._bind(args):
                self._unbind()
                stats["plain"] += 1
                self.fn(*args)
                return False
        else:                                # the same arrays again (:meth:`_picks`)
            every = (*args, *self.fixed) if self.fixed else args
            for s, pick, one in self.picks or self._picks(len(args)):
                s.bases = [pick(every)] if one else list(pick(every))
        was = fuse.replaying
        fuse.replaying = True                # small tasks by kernels too: the step repeats them
        try:
            return self._replay(args, stats)
        finally:
            fuse.replaying = was
            for s in self.stmts:             # (:meth:`_unbind`, inline)
                s.bases = None

    def _replay(self, args, stats) -> bool:
        fast = not (check.enabled or fperr.numpy_only or fperr.raising() or engine_statement.explaining)
        if check.folding:
            self._fold(args)
        stmts = self.stmts
        if engine._pending and fast:
            # pending expressions reading what the step writes are evaluated now, not by a
            # statement's before_write within the replay: their statements may free a kept
            # repeat (beyond KEEP_BYTES) after the replay checked it (the same on every locale)
            engine.materialise_readers({id(s.bases[0]): s.bases[0] for s in stmts}.values())
        groups = self.groups
        if groups is not None and self.merge_key != (settings.version[0], current_model()):
            self.free_groups()                           # made under other settings: made again below
            groups = None
        if groups is None or not fast or not MERGE or not self.merging:
            again = fast and self._again(args, stats)
            if not again:
                self._each(stmts, args, stats, fast)
            if groups is None and fast and MERGE:
                # (collective: one reduction, made whether or not this locale replayed by its
                # repeats, which it decides alone: they may be freed here only, beyond KEEP_BYTES)
                self._group()
            if fast and not again:
                self._keep()
            return True
        self._runs(args, stats)
        return True

    def _runs(self, args, stats) -> None:
        """Replay by the runs of :attr:`groups` (:attr:`units`): each by the repeat it holds
        (:class:`pgas.exec.merged.Kept`: nothing looked up) where that is still valid, else
        the usual way (:meth:`_unit`), which makes one for the next replay."""
        units = self.units
        key = persistent.settings_key()
        if self.units_key != key:
            for u in units:
                u[3] = None
            self.units_key = key
        # the fills' values converted before the flags are cleared (see _again); one that
        # does not convert: every run the usual way, which raises as a plain run does
        held = True
        for s in self.param_fills:
            if self._program(s, s.r, args) is None:
                held = False
        before = engine.before_write
        mask = fperr.cleared()
        try:
            for u in units:
                k = u[3]
                if held and k is not None and k.valid():
                    k.run(before)
                    stats["fast"] += u[1] - u[0]
                    continue
                fperr.reported(mask)
                mask = 0                           # (flags after an error of the usual way: not read)
                u[3] = None
                u[3] = self._unit(u, args, stats)
                mask = fperr.cleared()
        finally:
            fperr.reported(mask)

    def _unit(self, u, args, stats):
        """Run unit ``u`` of :attr:`units` the usual way: a merged run by its group
        (:meth:`pgas.exec.merged.Group.run`), a statement by :meth:`_each`; its repeat
        with nothing looked up for the next replay (:class:`pgas.exec.merged.Kept`), or None."""
        first, end, g = u[0], u[1], u[2]
        stmts = self.stmts[first:end]
        rs = None if g is None else g[2]
        if rs is None or not all([persistent.valid_everywhere(r) for r in rs]):
            self._each(stmts, args, stats, True)
            if g is not None:
                return None
            return merged.alone(_repeat(stmts[0]), stmts[0].bases[0], _fill_value(stmts[0]))
        items = []
        for s, r in zip(stmts, rs):
            got = self._program(s, r, args)
            if got is None:                          # a fill that does not convert: the usual way
                self._each(stmts, args, stats, True)
                return None
            items.append((r, Lowered(r.stmt, s.bases, got, r.names), s.bases[0]))
        if g[3] is None:
            g[3] = merged.Group()
        g[3].run([(r.fs, low, t) for r, low, t in items], engine_statement.compute_tasks,
                 engine_statement.write_results, engine.before_write)
        stats["fast"] += len(items)
        return g[3].kept(items, [_fill_value(s) for s in stmts])

    def _keep(self) -> None:
        """After statements ran one by one: hold each statement's repeat by its kept kernel
        calls (:func:`pgas.exec.persistent.kept`, None where there is none) for the next
        replay, if any statement has one."""
        kept = [_repeat(s, True) for s in self.stmts]
        # the values a statement's kept kernel calls were made with (its program's, now)
        self.kept_vals = [s.vals if k is not None and s.params and not s.fill else None
                          for s, k in zip(self.stmts, kept)]
        self.kept = (persistent.settings_key(), kept) if any(kept) else None
        self.chains, self.replays = None, 0

    def _again(self, args, stats) -> bool:
        """Replay by the repeats :meth:`_keep` holds, statements without one the usual way
        (all or nothing: False, nothing run, where the settings or any repeat changed).  A
        repeat freed within the step (a statement run the usual way built its compiled form
        again beyond ``KEEP_BYTES``, evicting another's) runs the usual way too."""
        kept = self.kept
        if kept is None:
            return False
        if kept[0] != persistent.settings_key() or not all([k is None or k.valid() for k in kept[1]]):
            self.kept = self.chains = None
            return False
        for i in self.with_params:                 # kernel calls made with other parameter values:
            s = self.stmts[i]                      # the usual way, and no chain from now on
            if kept[1][i] is None:
                continue
            for (_, j), v in zip(s.params, self.kept_vals[i]):
                a = args[j]
                if a is not v and not identical(a, v):
                    kept[1][i] = None
                    if not s.varies:
                        s.varies = True
                        self.chains = None
                    break
        before = engine.before_write
        self.replays += 1
        chains = self.chains
        if chains is None or chains[0] is not kept or CHAIN_AFTER is None:
            chains = self._chains(kept)            # (None: chains made before are dropped)
        links = chains[1]
        # the fills' values converted before the flags are cleared: a conversion that fails
        # (NaN to an integer) may set one, which is no error of the step's
        fills = ([self._program(s, s.r, args) if k is not None and s.fill else None for s, k in zip(self.stmts, kept[1])]
                 if self.fills else _NONE)
        mask = fperr.cleared()                     # the kernels' flags read once (around statements
        end = 0                                    # run the usual way, which read their own)
        usual = False                              # whether a statement ran the usual way
        try:
            for i, (s, k, prog) in enumerate(zip(self.stmts, kept[1], fills)):
                if i < end:
                    continue                       # (run by the chain before it)
                if links and i in links and not trace.on:
                    end, ch, ks = links[i]
                    # (every repeat was valid when the replay began; only a statement run the
                    # usual way since may have freed one)
                    if not usual or all([r.valid() for r in ks]):
                        for q in range(i, end):
                            before(self.stmts[q].bases[0], None)
                        ch.run()
                        for r in ks:
                            r.ran()
                        stats["fast"] += end - i
                        continue
                    end = 0
                if usual and k is not None and not k.valid():
                    k = None                       # freed by a statement run the usual way before it
                if k is not None and s.fill:
                    if prog is not None and k.takes(prog[1]):
                        before(s.bases[0], None)
                        k.run(prog[1])
                        stats["fast"] += 1
                        continue
                    k = None                       # (the usual way: it raises as a plain run does)
                if k is None:
                    fperr.reported(mask)
                    mask = 0                       # (flags after an error of the usual way: not read)
                    usual = True
                    self._each((s,), args, stats, True)
                    mask = fperr.cleared()
                    # its repeat, once it has one: a binding keeps its kernel calls from a
                    # run that found every kernel made, not always from its first
                    kept[1][i] = _repeat(s, True)
                    self.kept_vals[i] = s.vals if s.params else None
                    if kept[1][i] is not None and not s.varies:
                        self.chains = None         # (chains made again with it, on the next replay)
                else:
                    before(s.bases[0], None)
                    k.run(False)
                    stats["fast"] += 1
        finally:
            fperr.reported(mask)
        return True

    def _chains(self, kept):
        """Runs of consecutive statements whose repeats are each one row-kernel call with
        no message (:meth:`pgas.exec.persistent.Kept.chainable`), made into chains
        (:mod:`pgas.exec.chain`) once the step has replayed :data:`CHAIN_AFTER` times by
        the same repeats (compiling one costs about a second; the step replays by the
        statements' own kernels meanwhile), unless kernels are off (``fuse=False``).
        ``(kept, {})`` until then, made again on a later replay."""
        links: dict = {}
        if CHAIN_AFTER is None or self.replays < CHAIN_AFTER or settings.get("fuse") is False:
            self.chains = None
            return (kept, links)
        ks = kept[1]
        i, n = 0, len(ks)
        while i < n:
            end = i
            while (end < n and ks[end] is not None and not self.stmts[end].fill and not self.stmts[end].varies
                   and ks[end].chainable()):
                end += 1
            ch = chain.make([r.calls[1][0] for r in ks[i:end]]) if end - i >= 2 else None
            if ch is None:
                i = max(end, i + 1)
                continue
            links[i] = (i + ch.count, ch, tuple(ks[i:i + ch.count]))
            i += ch.count                          # (the rest of the run: the next chain)
        self.chains = (kept, links)
        return self.chains

    def _each(self, stmts, args, stats, fast) -> None:
        """Run ``stmts`` one by one, each exchanging its own messages."""
        before = engine.before_write
        rerun = persistent.rerun
        compute, write = engine_statement.compute_tasks, engine_statement.write_results
        valid = persistent.valid
        for s in stmts:
            r = s.r
            if fast and r is not None and valid(r):
                if s.fill or s.params:
                    prog = self._program(s, r, args)
                    if prog is None:
                        self._slow(s, args, args)          # raises as the usual path does
                        stats["slow"] += 1
                        continue
                else:
                    prog = r.prog
                bases = s.bases
                before(bases[0], None)
                rerun(r, bases, compute, write, None, prog)
                stats["fast"] += 1
            elif fast and check.folding:
                self._unfolded(s, args)
                stats["slow"] += 1
            else:
                self._slow(s, args, args)
                stats["slow"] += 1

    def _unfolded(self, s: Stmt, args) -> None:
        """:meth:`_slow` in a replay that runs by compiled forms, whose call :meth:`_fold` folded
        whole: the statement is not folded again, for whether it runs the usual way is this
        locale's own (its compiled form freed here, beyond ``KEEP_BYTES``, kept elsewhere)."""
        check.folding = False
        try:
            self._slow(s, args, args)
        finally:
            check.folding = True

    def _program(self, s: Stmt, r, args):
        """Statement ``s``'s program (recorded as ``r``'s) with the call's parameter values,
        or None where a fill's value does not convert to the target's dtype."""
        if s.fill:
            if not s.params:
                return ("const", s.value)
            try:
                s.buf[()] = args[s.params[0][1]]
            except (TypeError, ValueError, OverflowError):
                return None
            return ("const", s.buf[()])
        if not s.params:
            return r.prog
        vals = tuple([args[i] for _, i in s.params])
        if s.prog is None or s.vals is None or not _same_values(vals, s.vals) or s.prog[0] is not r:
            p = r.prog
            for (path, _), v in zip(s.params, vals):
                p = substitute(p, path, v)
            s.prog, s.vals = (r, p), vals
        return s.prog[1]

    def _group(self) -> None:
        """Split the statements into runs whose transfers can travel together, agreed by
        every locale (collective: one reduction).  A statement joins the run before it
        unless it does not replay by persistent transfers, or it moves in messages an
        array region that a statement of the run writes: the messages of a run are packed
        before its first statement computes, so none may carry what the run itself
        changes (regions by their bounding boxes in the whole array).  Each locale decides
        by the messages it sends and receives; a run ends where it ends on any locale."""
        stmts = self.stmts
        n = len(stmts)
        # per statement: not mergeable, starts a run, moves messages, sends or receives several
        # messages with one peer (a run that merges nothing runs its statements one by one)
        local = np.zeros(4 * n, dtype=np.int64)
        why = [""] * n
        run_start = None
        for k, s in enumerate(stmts):
            r = s.r
            if r is None or not persistent.valid(r):
                local[k] = local[n + k] = 1
                why[k] = "it does not replay by persistent transfers"
                run_start = None
                continue
            fs = r.fs
            recv, send = [p for p, _, _ in fs.recvs], [p for p, _, _, _ in fs.sends]
            local[2 * n + k] = bool(recv or send)
            local[3 * n + k] = len(set(recv)) < len(recv) or len(set(send)) < len(send)
            reason = None if run_start is None else conflict(stmts[run_start:k], s, run_start, moved_arrays(fs, s))
            if reason is not None or run_start is None:
                local[n + k] = 1
                why[k] = f"statement {k + 1} {reason}" if reason else ""
                run_start = k
        agreed = comm.allreduce(local, "max")
        groups: list = []
        for k, s in enumerate(stmts):
            if agreed[k]:
                groups.append([k, k + 1, None, None, why[k] or "it does not replay by persistent transfers "
                               "on every locale"])
            elif agreed[n + k] or not groups or groups[-1][2] is None:
                groups.append([k, k + 1, [s.r], None, why[k] or ("" if k == 0 or agreed[k - 1] else
                                                                   "another locale starts a new run here")])
            else:
                groups[-1][1] = k + 1
                groups[-1][2].append(s.r)
        for g in groups:                       # (from agreed facts: the same on every locale)
            if g[2] is not None and sum(agreed[2 * n + g[0]:2 * n + g[1]]) < 2 and not any(
                    agreed[3 * n + g[0]:3 * n + g[1]]):
                g[2] = None
                g[4] = ("nothing to merge (fewer than two statements with messages, none with several to one peer)"
                        + ("; a new run starts here: " + g[4] if g[4] else ""))
        self.groups = groups
        self.merging = any(g[2] is not None for g in groups)
        self.merge_key = (settings.version[0], current_model())
        self.units = [[g[0], g[1], g, None] if g[2] is not None else [k, k + 1, None, None]
                      for g in groups for k in (range(g[0], g[1]) if g[2] is None else (g[0],))]
        self.units_key = None
        self.param_fills = [s for s in stmts if s.fill and s.params]

    def _fold(self, args) -> None:
        """Fold one signature for the whole call (collective checking's running hash): its
        entry made once per binding and scalar values (the same values bit for bit: the
        same hash), repeated by :func:`pgas.comm.check.fold_repeat` (the caller's site looked
        up again only where it called from elsewhere)."""
        tag = self.fold_tag
        vals = ()
        if self.params:
            vals = tuple([args[k] for k in self.params])
            if tag is not None and not _same_values(vals, self.fold_vals):
                tag = None
        if tag is None:
            tag = self.fold_tag = self._fold_tag(args)
            self.fold_vals = vals
        check.fold_repeat(tag)

    def _fold_tag(self, args) -> list:
        """What :meth:`_fold` folds for ``args``: the program's hash with the arrays' numbers
        and the scalars' values (:func:`pgas.comm.check.repeat_tag`)."""
        items = [self.hash]
        arrays = []
        for a in args:
            if engine.is_array(a):
                items.append(a._seq)
                arrays.append((a._seq, None, None, id(a), a.name))
            else:
                v = a.item() if isinstance(a, np.generic) else a
                items.append(v if v == v else "nan")
        return check.repeat_tag(check.stable_hash(tuple(items)) & _MASK, "compiled step", tuple(arrays))

    def describe(self) -> str:
        head = f"arguments ({', '.join(self.shape)})"
        if self.reason is not None:
            return f"{head}: runs its function plainly: {self.reason}"
        lines = [f"{head}: {len(self.stmts)} statements recorded"]
        for n, s in enumerate(self.stmts, 1):
            lines.append(f"  {n}. {text(s.target)} = {text(s.value)}: {s.how}")
        lines.extend(self._describe_groups())
        lines.extend(self._describe_chains())
        return "\n".join(lines)

    def _describe_chains(self) -> list:
        """The runs of statements replayed as one compiled call on this locale."""
        if CHAIN_AFTER is None:
            return ["  kernels: each statement its own (chains are off: pgas.array.step.replay.CHAIN_AFTER)"]
        links = self.chains[1] if self.chains is not None else {}
        if not links:
            return [f"  kernels on locale {comm.here()}: each statement its own (statements that each run one "
                    "row kernel with no message are chained into one compiled call, interleaved by rows, after "
                    f"{CHAIN_AFTER} replays)"]
        out = [f"  kernels on locale {comm.here()}: {len(links)} chains of statements, each one compiled call "
               "interleaved by rows"]
        for first, (end, ch, _) in sorted(links.items()):
            out.append(f"    statements {first + 1}-{end}: one call: {ch.describe(first + 1)}")
        return out

    def _describe_groups(self) -> list:
        """The runs of statements sharing one exchange, with this locale's messages merged."""
        if not MERGE:
            return ["  exchanges: each statement its own (merging is off: pgas.array.step.replay.MERGE)"]
        if self.groups is None:
            return ["  exchanges: each statement its own until the runs that share one are made "
                    "(on the first replay)"]
        merging = sum(g[2] is not None for g in self.groups)
        out = [f"  exchanges on locale {comm.here()}: {merging} merged of {len(self.groups)} runs of statements"]
        held = {id(u[2]) for u in self.units if u[2] is not None and u[3] is not None}
        for g in self.groups:
            first, end, rs, ex, why = g
            which = f"statement {first + 1}" if end == first + 1 else f"statements {first + 1}-{end}"
            if rs is None:
                out.append(f"    {which}: {'its' if end == first + 1 else 'their'} own exchanges: {why}")
                continue
            text = f"    {which}: one exchange"
            if ex is not None and ex.ex is not None:
                (recv, send), (nr, ns) = ex.ex.peers, ex.ex.parts
                text += (f": sends {_count(len(send), 'message')} (to locales {send}) carrying "
                         f"{_count(ns, 'statement message')}, receives {len(recv)} (from locales {recv}) "
                         f"carrying {nr}")
            if id(g) in held:
                text += "; repeated with nothing looked up (pgas.exec.merged.Kept)"
            if why:
                text += f"; a new exchange starts here: {why}"
            out.append(text)
        return out



def _repeat(s: Stmt, params: bool = False):
    """Statement ``s``'s repeat by kept kernel calls (:func:`pgas.exec.persistent.kept`, or
    :func:`~pgas.exec.persistent.kept_fill` for a fill) on its bound arrays, if it has one.
    A statement with parameters in its program has one only with ``params`` (the caller
    runs it only while the call's values are those it was made with, :meth:`Program._again`):
    the kernel calls of its program with the last values (:meth:`Program._program`)."""
    if s.r is None:
        return None
    if s.fill:
        return persistent.kept_fill(s.r, s.bases)
    if not s.params:
        return persistent.kept(s.r, s.bases)
    if not params or s.prog is None or s.prog[0] is not s.r:
        return None
    return persistent.kept(s.r, s.bases, prog=s.prog[1])


def _fill_value(s: Stmt):
    """What a repeat of fill ``s`` stores (:class:`pgas.exec.persistent.KeptFill`): its
    constant, or its buffer (a 0-d array of the target's dtype) that each replay converts
    the argument into; None for a statement that is not a fill, or a constant that is no
    NumPy scalar (the kept views take one of the target's dtype only)."""
    if not s.fill:
        return None
    if s.params:
        return s.buf
    return s.value if isinstance(s.value, np.generic) else None


def _count(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _same_values(a, b) -> bool:
    return all(x is y or identical(x, y) for x, y in zip(a, b))
