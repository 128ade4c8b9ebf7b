/* learn_bench.c - the DOPPLER learning benchmarks behind bench/RESULTS.md.

       build/learn_bench timing  GRAPH [--devices N] [--episodes E]
       build/learn_bench quality GRAPH [--devices N] [--il E] [--sim E] [--samples K] [--seed S]
                                       [--seeds N] [--rollouts K] [--order fifo|priority]
                                       [--lr-sim LR] [--eps-sim EPS] [--entropy B] [--temp T]
                                       [--greedy-baseline 1] [--sil W] [--adv-norm 1]
                                       [--step-bl 1|-1] [--gamma G] [--hidden H] [--layers K]
                                       [--anchor X] [--anchor-rate R] [--select N] [--per-seed]
                                       [--init POLICY] [--ppo E] [--ppo-clip C] [--critic 1]
                                       [--critic-lr L] [--reinforce 1] [--tau T]
                                       [--insertion 1] [--op-logits R] [--op-prior K]
                                       [--op-batch B] [--op-elite E] [--op-restart N]
       build/learn_bench stability GRAPH [--il E] [--sim E] [--seeds N] [--per-seed] [options of quality]
       build/learn_bench diag GRAPH [--il E] [--sim E] [--seed S] [--window W] [options of quality]
       build/learn_bench general STG_DIR [--procs P] [--il E] [--sim E]
       build/learn_bench zeroshot POLICY [--devices 2,4,8] [--samples K] [--polish P] GRAPH...

   timing:  milliseconds per imitation episode, per REINFORCE episode
            (rollout + simulation + backward + Adam) and per greedy
            inference (dp_policy_place, its setup included), one thread,
            and the process's peak resident memory.
   quality: trains il then sim on GRAPH with seeds S .. S+N-1, then compares
            doppler (the policy: greedy, and best of greedy + K samples; the
            search: the best placement any of the run's simulations reached,
            training episodes and samples) with cp, heft, enumopt and anneal
            (anneal's budget = the simulations doppler used, its seed the
            run's), as ratios to the lower bound: mean ± standard deviation
            over the seeds, and the seeds where doppler is at or below every
            heuristic; then the policy against anneal given as many
            simulations, and the search against anneal at its default
            budget at the run's seed (that anneal's mean in brackets).
            --order priority: doppler runs in SEL's order, the
            heuristics in b-level order (both trained and scored so).
            --per-seed: then one row per seed (greedy, best of samples,
            search, the best heuristic and which, anneal, and how far the
            policy's best and the search are above (+) or below (-) the
            best heuristic, in percent; the counts above allow no margin).
   stability: per seed (default 10), il E then sim E (default 1000 and
            20000) on GRAPH; how many runs end with a greedy placement worse
            than after il, how many end on one device, and the mean greedy
            ratios after il and after sim (--per-seed: each run on stderr).
   diag:    one run; per window of W episodes the means of the training
            diagnostics (dp_episode_info: entropies, -log P(cp expert),
            gradient norm, return scale, share joining an input's device).
   --init P: quality starts every seed from the policy in P (e.g. the
            pretrained policies/doppler_family.dpl; give --il 0) instead of
            a new one: DOPPLER's stage II on the target graph only.
   --insertion 1: dp_policy_opts.insertion (the partial schedule lets an
            op start in an idle gap of its device).
   --op-logits R, --op-prior K, --op-batch B, --op-elite E, --op-restart N:
            dp_train_opts.op_logits, op_prior, op_batch, op_elite,
            op_restart (one graph: stages sim and real learn per-op
            logits; --op-restart -1: never restart).
   --anchor X: dp_train_opts.anchor (-1: off, the paper's REINFORCE);
   --select N: dp_train_opts.select (-1: none).
   --ppo E, --ppo-clip C: dp_train_opts.ppo_epochs, ppo_clip (PPO);
   --critic 1, --critic-lr L: dp_train_opts.critic, critic_lr.
   --reinforce 1, --tau T (--algo placeto): dp_train_opts.placeto_reinforce
            (the paper's REINFORCE update), placeto_tau.
   general: trains once on STG_DIR/50/rand0000..0059 (P processors, no
            communication), places rand0060..0089 without retraining; mean
            and worst ratio to the proven optimum (STG_DIR/opt_50_P.csv)
            beside heft and cp.
   zeroshot: places every GRAPH on each device count with the trained
            POLICY (greedy + K samples, default 64; no training) and with
            cp, heft and anneal at its default budget (20 x ops x devices
            simulations, seed 1), one row each: ratios to the lower bound
            and seconds; then how many placements are at or below
            min(cp, heft), the mean of doppler / anneal - 1 and the ratio
            of the summed times (the pretrained policy's targets).
            --polish P: also the same placements improved by local search
            (dp_infer_opts.polish) and anneal given as many simulations.
            --seeds N: then seeds 2..N as well (the policy's samples and
            anneal both at seed s; no rows): anneal's answer is a random
            draw (ffnn: 1.114 to 1.242 of the lower bound over ten seeds),
            so the mean over seeds compares expectations, not one draw.
   --algo placeto: the same for Placeto (stage sim only, sweeps from cp;
            timing has no imitation column).
   quality also gives the episodes the training needed to get within 5%
   of its final cost: the first episode where the mean cost of the last 50
   episodes is within 5% of the mean of the last 10% of all episodes.
   Output: markdown rows. Default policy: hidden 32, 3 rounds (doppler),
   1 pass pair (placeto); --hidden and --layers change it (every command). */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int die(const dp_error *e) { fprintf(stderr, "learn_bench: %s\n", e->msg); return 1; }

static int placeto;   /* --algo placeto */

/* every episode's cost, for the episodes-to-within-5% figure */
typedef struct curve { double *cost; int n, cap; } curve;

static int record(void *ctx, const dp_episode_info *info)
{
    curve *c = (curve *)ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->cost = realloc(c->cost, sizeof(double) * (size_t)c->cap);
        if (!c->cost) return 1;
    }
    c->cost[c->n++] = info->cost;
    return 0;
}

static int within5(const curve *c)
{
    int tail = (c->n + 9) / 10, w = 50;
    double fin = 0;
    for (int i = c->n - tail; i < c->n; i++) fin += c->cost[i];
    fin /= tail;
    for (int e = 0; e < c->n; e++) {
        double m = 0;
        int k = 0;
        for (int i = e - w + 1 < 0 ? 0 : e - w + 1; i <= e; i++, k++) m += c->cost[i];
        if (k == w || e == c->n - 1) { if (m / k <= fin * 1.05) return e + 1; }
    }
    return c->n;
}

static int hidden, layers;       /* --hidden, --layers: 0 -> the library's defaults */
static int insertion;            /* --insertion 1: dp_policy_opts.insertion */
static const char *init_path;    /* --init P: quality trains from this policy */

static void policy_opts(dp_policy_opts *po, const dp_cluster *c)
{
    memset(po, 0, sizeof *po);
    po->hidden = hidden; po->layers = layers; po->insertion = placeto ? 0 : insertion;
    if (placeto) { po->algo = DP_ALGO_PLACETO; po->devices = c->n; }
}

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 2; i < argc - 1; i++) if (!strcmp(argv[i], name)) return argv[i + 1];
    return def;
}

static int flag(int argc, char **argv, const char *name)
{
    for (int i = 2; i < argc; i++) if (!strcmp(argv[i], name)) return 1;
    return 0;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

static const char *base(const char *p) { const char *s = strrchr(p, '/'); return s ? s + 1 : p; }

static void sim_opts(dp_train_opts *to);

static int timing(const char *path, int devices, int E)
{
    dp_graph g; dp_cluster c; dp_policy p; dp_error e = {0}; dp_train_result r;
    dp_train_opts to; dp_infer_opts io; dp_policy_opts po;
    memset(&to, 0, sizeof to); memset(&io, 0, sizeof io);
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e) || dp_cluster_for_graph(&c, &g, devices, &e)) return die(&e);
    policy_opts(&po, &c);
    if (dp_policy_init(&p, &po, &e)) return die(&e);
    const dp_graph *gs[1] = { &g };
    double il = 0, rl, inf, ms;
    if (!placeto) {
        to.episodes[DP_STAGE_IL] = E;
        if (dp_train(&p, gs, 1, &c, &to, &r, &e)) return die(&e);
        il = r.seconds / r.episodes;
    }
    to.episodes[DP_STAGE_IL] = 0; to.episodes[DP_STAGE_SIM] = E;
    sim_opts(&to);   /* --ppo, --critic, ...: their episodes' time */
    if (dp_train(&p, gs, 1, &c, &to, &r, &e)) return die(&e);
    rl = r.seconds / r.episodes;
    int *a = malloc(sizeof(int) * g.n_ops), reps = 0;
    double t0 = dp_now();
    do {
        if (dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &e)) return die(&e);
        reps++;
    } while (dp_now() - t0 < 1.0);
    inf = (dp_now() - t0) / reps;
    if (placeto)
        printf("| %s | %d | %d | %.3f | %.3f | %.1f |\n", base(path), g.n_ops, devices, rl * 1e3, inf * 1e3, peak_mib());
    else
        printf("| %s | %d | %d | %.3f | %.3f | %.3f | %.1f |\n", base(path), g.n_ops, devices,
               il * 1e3, rl * 1e3, inf * 1e3, peak_mib());
    free(a); dp_policy_free(&p); dp_cluster_free(&c); dp_graph_free(&g);
    return 0;
}

static double lr_sim, eps_sim, temp, sil, ent, gamma_, anchor, anchor_rate;
static int select_;              /* --select N: 0 the library's default, -1 none */   /* 0: the library's defaults */
static int greedy_bl, adv_norm, step_bl, ppo, critic, op_batch, op_elite, op_restart;
static double ppo_clip, critic_lr, op_logits, op_prior;
static int pt_reinforce;         /* --reinforce 1: placeto's REINFORCE update */
static double pt_tau;            /* --tau T: placeto's one-step improvement */
static int rollouts;             /* 0: the library's default (1) */
static dp_order order;           /* --order: doppler's runtime order and the heuristics' */
static int per_seed;             /* --per-seed: a row per seed after the summary */

/* The command line's training options (0: the library's defaults). */
static void sim_opts(dp_train_opts *to)
{
    to->lr[DP_STAGE_SIM] = lr_sim; to->eps_start[DP_STAGE_SIM] = eps_sim; to->rollouts = placeto ? 0 : rollouts;
    to->temperature = temp; to->self_imitation = sil; to->greedy_baseline = greedy_bl; to->adv_norm = adv_norm;
    to->step_baseline = step_bl; to->gamma = gamma_; to->entropy = ent;
    to->anchor = anchor; to->anchor_rate = anchor_rate; to->select = select_;
    to->ppo_epochs = placeto ? 0 : ppo; to->ppo_clip = ppo_clip;
    to->critic = placeto ? 0 : critic; to->critic_lr = critic_lr;
    to->op_logits = placeto ? 0 : op_logits; to->op_prior = op_prior;
    to->op_batch = op_batch; to->op_elite = op_elite; to->op_restart = op_restart;
    to->placeto_reinforce = pt_reinforce; to->placeto_tau = pt_tau;
}

typedef struct tally { double sum, sq; int n; } tally;
static void add(tally *s, double v) { s->sum += v; s->sq += v * v; s->n++; }
static double mean(const tally *s) { return s->n ? s->sum / s->n : 0; }
static double sd(const tally *s) { double m = mean(s), v = s->n ? s->sq / s->n - m * m : 0; return v > 0 ? sqrt(v) : 0; }
static void cell(const tally *s) { if (s->n > 1) printf(" %.3f ± %.3f |", mean(s), sd(s)); else printf(" %.3f |", mean(s)); }

/* One row: the mean (and spread) over `seeds` seeds of training on GRAPH
   then placing it, as ratios to the lower bound. The policy columns are
   what the trained policy places (greedy; best of greedy and K samples);
   the search column is the best placement any simulation of the run
   reached (training episodes and the samples): DOPPLER's deployment-stage
   answer. The heuristics get the same runtime order; anneal the run's
   total number of simulations, with the run's seed. The last two columns
   count the seeds where doppler is at or below every heuristic. */
static int quality(const char *path, int devices, int il, int sim, int samples, uint64_t seed0, int seeds)
{
    dp_graph g; dp_cluster c; dp_error e = {0};
    tally sg = {0}, sb = {0}, ss = {0}, sa = {0}, sh[3] = {{0}}, sec = {0}, w5 = {0}, sdef = {0};
    long sims = 0;
    int ok_policy = 0, ok_search = 0, ok_anneal = 0, ok_default = 0;
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e) || dp_cluster_for_graph(&c, &g, devices, &e)) return die(&e);
    int *a = malloc(sizeof(int) * g.n_ops), *ba = malloc(sizeof(int) * g.n_ops), *bo = malloc(sizeof(int) * g.n_ops);
    /* per seed, for --per-seed: ratios to the lower bound, and which of
       ms below was the best heuristic */
    struct { double greedy, best, search, hbest, anneal; int hk; } *row = calloc((size_t)seeds, sizeof *row);
    if (!a || !ba || !bo || !row) { fprintf(stderr, "learn_bench: out of memory\n"); return 1; }
    double lb = dp_lower_bound(&g, &c);
    dp_method ms[4] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_ENUMOPT, DP_METHOD_ANNEAL };
    for (int si = 0; si < seeds; si++) {
        uint64_t seed = seed0 + (uint64_t)si;
        dp_policy p; dp_train_result r; dp_train_opts to; dp_infer_opts io; dp_policy_opts po;
        dp_place_opts plo; dp_place_result pr;
        curve cv = {0};
        double bc = 0;
        memset(&to, 0, sizeof to); memset(&io, 0, sizeof io); memset(&plo, 0, sizeof plo);
        policy_opts(&po, &c);
        po.seed = seed;
        if (init_path ? dp_policy_load(&p, init_path, &e) : dp_policy_init(&p, &po, &e)) return die(&e);
        const dp_graph *gs[1] = { &g };
        to.episodes[DP_STAGE_IL] = placeto ? 0 : il; to.episodes[DP_STAGE_SIM] = sim; to.seed = seed;
        sim_opts(&to);
        to.order = order;
        to.on_episode = record; to.on_episode_ctx = &cv;
        to.best_cost = &bc; to.best_assign = &ba; to.best_order = &bo;
        if (dp_train(&p, gs, 1, &c, &to, &r, &e)) return die(&e);
        double greedy, best;
        io.order = order;
        if (dp_policy_place(&p, &g, &c, &io, a, NULL, &greedy, &e)) return die(&e);
        io.samples = samples; io.seed = seed;
        if (dp_policy_place(&p, &g, &c, &io, a, NULL, &best, &e)) return die(&e);
        sims = r.simulations + (placeto ? (long)(samples + 1) * g.n_ops : samples + 1);
        double search = bc < best ? bc : best;
        add(&sg, greedy / lb); add(&sb, best / lb); add(&ss, search / lb); add(&sec, r.seconds); add(&w5, within5(&cv));
        free(cv.cost);
        double hbest = 1e300;
        int hk = 0;
        for (int k = 0; k < 4; k++) {
            plo.budget = (int)sims; plo.seed = seed; plo.order = order;
            if (dp_place(ms[k], &g, &c, &plo, a, &pr, &e)) return die(&e);
            if (k < 3) add(&sh[k], pr.makespan / lb); else add(&sa, pr.makespan / lb);
            if (k == 3) row[si].anneal = pr.makespan / lb;
            if (pr.makespan < hbest) { hbest = pr.makespan; hk = k; }
        }
        row[si].greedy = greedy / lb; row[si].best = best / lb; row[si].search = search / lb;
        row[si].hbest = hbest / lb; row[si].hk = hk;
        ok_policy += best <= hbest * (1 + 1e-9);
        ok_search += search <= hbest * (1 + 1e-9);
        /* issue 17's per-graph targets: the policy against anneal given the
           same simulations, the search against anneal's default budget */
        ok_anneal += best <= row[si].anneal * lb * (1 + 1e-9);
        plo.budget = 0; plo.seed = seed; plo.order = order;
        if (dp_place(DP_METHOD_ANNEAL, &g, &c, &plo, a, &pr, &e)) return die(&e);
        ok_default += search <= pr.makespan * (1 + 1e-9);
        add(&sdef, pr.makespan / lb);
        dp_policy_free(&p);
    }
    printf("| %s | %.4g | %d | %ld | %.0f of %d, %.1f s |", base(path), lb, seeds, sims, mean(&w5), placeto ? sim : il + sim, mean(&sec));
    cell(&sg); cell(&sb); cell(&ss);
    for (int k = 0; k < 3; k++) cell(&sh[k]);
    cell(&sa);
    printf(" %d of %d | %d of %d | %d of %d | %d of %d (%.3f) |\n", ok_policy, seeds, ok_search, seeds, ok_anneal, seeds, ok_default, seeds,
           mean(&sdef));
    if (per_seed) {
        printf("\n| %s, seed | greedy | best of greedy + %d samples | search | best heuristic | anneal | policy vs best heuristic | search vs best heuristic |\n"
               "|---|---:|---:|---:|---|---:|---:|---:|\n", base(path), samples);
        for (int si = 0; si < seeds; si++) {
            printf("| %llu | %.4f | %.4f | %.4f | %.4f (%s) | %.4f | %+.3f%% | %+.3f%% |\n", (unsigned long long)(seed0 + (uint64_t)si),
                   row[si].greedy, row[si].best, row[si].search, row[si].hbest, dp_method_name(ms[row[si].hk]), row[si].anneal,
                   100 * (row[si].best / row[si].hbest - 1), 100 * (row[si].search / row[si].hbest - 1));
        }
        printf("\n");
    }
    free(a); free(ba); free(bo); free(row); dp_cluster_free(&c); dp_graph_free(&g);
    return 0;
}

/* diag: one training run (il then sim, seed S) and, per window of W
   episodes, the means of what dp_episode_info reports: sampled cost and
   the best cost of the stage so far over the lower bound, the loss, SEL's and
   PLC's per-step entropy, the gradient norm before clipping, the returns'
   scale, the share of PLC choices that joined an input's device, and with
   --ppo / --critic the share of choices PPO clipped and the critic's loss;
   then the trained policy's greedy placement and best of 64 samples. */
typedef struct diag_acc { double v[11]; int n, window; dp_stage stage; } diag_acc;

static void diag_flush(diag_acc *a, int upto)
{
    if (!a->n) return;
    printf("| %s | %d | %.3f | %.3f | %.4f | %.3f | %.3f | %.3f | %.3g | %.3g | %.3f | %.3f | %.3g |\n", dp_stage_name(a->stage), upto,
           a->v[0] / a->n, a->v[1] / a->n, a->v[2] / a->n, a->v[3] / a->n, a->v[4] / a->n, a->v[8] / a->n, a->v[5] / a->n, a->v[6] / a->n, a->v[7] / a->n,
           a->v[9] / a->n, a->v[10] / a->n);
    memset(a->v, 0, sizeof a->v); a->n = 0;
}

static int diag_cb(void *ctx, const dp_episode_info *i)
{
    diag_acc *a = (diag_acc *)ctx;
    if (a->n && i->stage != a->stage) diag_flush(a, i->episode);
    a->stage = i->stage;
    a->v[0] += i->cost / i->lower_bound;
    a->v[1] += i->best / i->lower_bound;
    a->v[2] += i->loss; a->v[3] += i->sel_entropy; a->v[4] += i->plc_entropy;
    a->v[5] += i->grad_norm; a->v[6] += i->ret_scale; a->v[7] += i->parent_share; a->v[8] += i->expert_xent;
    a->v[9] += i->ppo_clipped; a->v[10] += i->critic_loss;
    if (++a->n == a->window || i->episode + 1 == i->episodes) diag_flush(a, i->episode + 1);
    return 0;
}

static int diag(const char *path, int devices, int il, int sim, uint64_t seed, int window)
{
    dp_graph g; dp_cluster c; dp_error e = {0}; dp_policy p; dp_train_result r; dp_train_opts to; dp_infer_opts io; dp_policy_opts po;
    diag_acc acc;
    double greedy, best;
    memset(&acc, 0, sizeof acc); acc.window = window > 0 ? window : 250;
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e) || dp_cluster_for_graph(&c, &g, devices, &e)) return die(&e);
    policy_opts(&po, &c); po.seed = seed;
    if (dp_policy_init(&p, &po, &e)) return die(&e);
    memset(&to, 0, sizeof to); memset(&io, 0, sizeof io);
    to.episodes[DP_STAGE_IL] = il; to.episodes[DP_STAGE_SIM] = sim; to.seed = seed; to.order = order;
    sim_opts(&to);
    to.on_episode = diag_cb; to.on_episode_ctx = &acc;
    printf("| stage | episodes | cost / LB | best so far / LB | loss | SEL entropy | PLC entropy | -log P(cp expert) | grad norm | return scale | joins an input's device | PPO clipped | critic loss |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    const dp_graph *gs[1] = { &g };
    if (dp_train(&p, gs, 1, &c, &to, &r, &e)) return die(&e);
    int *a = malloc(sizeof(int) * (size_t)g.n_ops);
    io.order = order;
    if (!a || dp_policy_place(&p, &g, &c, &io, a, NULL, &greedy, &e)) return die(&e);
    io.samples = 64; io.seed = seed;
    if (dp_policy_place(&p, &g, &c, &io, a, NULL, &best, &e)) return die(&e);
    double lb = dp_lower_bound(&g, &c);
    printf("\n%s, seed %llu: greedy %.3f, best of greedy + 64 samples %.3f (x lower bound), %ld simulations, %.1f s\n",
           base(path), (unsigned long long)seed, greedy / lb, best / lb, r.simulations, r.seconds);
    free(a); dp_policy_free(&p); dp_cluster_free(&c); dp_graph_free(&g);
    return 0;
}

/* stability: N seeds of il E_il then sim E on GRAPH; per seed the greedy
   placement after stage il and after stage sim. One row: how many runs
   end worse than after il (greedy makespan higher by more than 1e-9), how
   many collapse onto one device (the final greedy placement uses a
   single device), and the mean greedy ratios to the lower bound. */
static int stability(const char *path, int devices, int il, int sim, uint64_t seed0, int seeds)
{
    dp_graph g; dp_cluster c; dp_error e = {0};
    int worse = 0, collapsed = 0;
    tally s_il = {0}, s_fin = {0}, sec = {0};
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e) || dp_cluster_for_graph(&c, &g, devices, &e)) return die(&e);
    int *a = malloc(sizeof(int) * (size_t)g.n_ops);
    if (!a) { fprintf(stderr, "learn_bench: out of memory\n"); return 1; }
    double lb = dp_lower_bound(&g, &c);
    for (int si = 0; si < seeds; si++) {
        uint64_t seed = seed0 + (uint64_t)si;
        dp_policy p; dp_train_result r; dp_train_opts to; dp_infer_opts io; dp_policy_opts po;
        double ms_il, ms_fin;
        const dp_graph *gs[1] = { &g };
        policy_opts(&po, &c); po.seed = seed;
        if (dp_policy_init(&p, &po, &e)) return die(&e);
        memset(&to, 0, sizeof to); memset(&io, 0, sizeof io);
        to.seed = seed; to.order = order; io.order = order;
        sim_opts(&to);
        to.episodes[DP_STAGE_IL] = il;
        if (dp_train(&p, gs, 1, &c, &to, &r, &e)) return die(&e);
        if (dp_policy_place(&p, &g, &c, &io, a, NULL, &ms_il, &e)) return die(&e);
        to.episodes[DP_STAGE_IL] = 0; to.episodes[DP_STAGE_SIM] = sim;
        if (dp_train(&p, gs, 1, &c, &to, &r, &e)) return die(&e);
        if (dp_policy_place(&p, &g, &c, &io, a, NULL, &ms_fin, &e)) return die(&e);
        int one = 1;
        for (int v = 1; v < g.n_ops; v++) if (a[v] != a[0]) { one = 0; break; }
        worse += ms_fin > ms_il * (1 + 1e-9);
        collapsed += one;
        add(&s_il, ms_il / lb); add(&s_fin, ms_fin / lb); add(&sec, r.seconds);
        if (per_seed) fprintf(stderr, "%s seed %llu: after il %.4f, after sim %.4f%s\n", base(path), (unsigned long long)seed,
                              ms_il / lb, ms_fin / lb, one ? " (one device)" : "");
        dp_policy_free(&p);
    }
    printf("| %s | %d | %d + %d | %d of %d | %d of %d |", base(path), devices, il, sim, worse, seeds, collapsed, seeds);
    cell(&s_il); cell(&s_fin);
    printf(" %.1f s |\n", mean(&sec));
    free(a); dp_cluster_free(&c); dp_graph_free(&g);
    return 0;
}

static int general(const char *dir, int procs, int il, int sim)
{
    enum { TRAIN = 60, TEST = 30 };
    dp_graph g[TRAIN + TEST]; dp_cluster c; dp_policy p; dp_error e = {0}; dp_train_result r;
    dp_train_opts to; dp_infer_opts io; dp_policy_opts po;
    double opt[TRAIN + TEST];
    char path[1024];
    memset(&po, 0, sizeof po); memset(&to, 0, sizeof to); memset(&io, 0, sizeof io);
    snprintf(path, sizeof path, "%s/opt_50_%d.csv", dir, procs);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "learn_bench: cannot open %s\n", path); return 1; }
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        int id, pp; double o;
        if (sscanf(line, "50/rand%d.stg,%d,%lf", &id, &pp, &o) == 3 && id >= 0 && id < TRAIN + TEST) { opt[id] = o; found++; }
    }
    fclose(f);
    if (found < TRAIN + TEST) { fprintf(stderr, "learn_bench: %s lists %d of the 90 graphs\n", path, found); return 1; }
    for (int i = 0; i < TRAIN + TEST; i++) {
        snprintf(path, sizeof path, "%s/50/rand%04d.stg", dir, i);
        if (dp_graph_read(&g[i], path, DP_FORMAT_AUTO, &e)) return die(&e);
    }
    if (dp_cluster_for_graph(&c, &g[0], procs, &e)) return die(&e);
    policy_opts(&po, &c);
    if (dp_policy_init(&p, &po, &e)) return die(&e);
    const dp_graph *gs[TRAIN];
    for (int i = 0; i < TRAIN; i++) gs[i] = &g[i];
    to.episodes[DP_STAGE_IL] = placeto ? 0 : il; to.episodes[DP_STAGE_SIM] = sim; to.seed = 1;
    if (dp_train(&p, gs, TRAIN, &c, &to, &r, &e)) return die(&e);
    double sum[3] = {0}, worst[3] = {0};
    int at_opt[3] = {0};
    for (int i = TRAIN; i < TRAIN + TEST; i++) {
        int a[128];
        double ms[3];
        dp_place_result pr;
        if (dp_policy_place(&p, &g[i], &c, &io, a, NULL, &ms[0], &e)) return die(&e);
        if (dp_place(DP_METHOD_HEFT, &g[i], &c, NULL, a, &pr, &e)) return die(&e);
        ms[1] = pr.makespan;
        if (dp_place(DP_METHOD_CP, &g[i], &c, NULL, a, &pr, &e)) return die(&e);
        ms[2] = pr.makespan;
        for (int k = 0; k < 3; k++) {
            double q = ms[k] / opt[i];
            sum[k] += q;
            if (q > worst[k]) worst[k] = q;
            at_opt[k] += q <= 1 + 1e-9;
        }
    }
    printf("| %s | %d | %d + %d episodes, %.1f s | %.4f (%.3f) [%d/30] | %.4f (%.3f) [%d/30] | %.4f (%.3f) [%d/30] |\n",
           placeto ? "placeto" : "doppler", procs, placeto ? 0 : il, sim, r.seconds, sum[0] / TEST, worst[0], at_opt[0], sum[1] / TEST, worst[1], at_opt[1],
           sum[2] / TEST, worst[2], at_opt[2]);
    return 0;
}

/* zeroshot's seeds 2..N: the same placements, no rows (seed 1, the
   table's, gave rows placements, below of them at or below min(cp, heft),
   rel the sum of doppler / anneal - 1); each graph read once, cp and heft
   (no seed) once per device count. */
static int zeroshot_seeds(const dp_policy *p, int argc, char **argv, const int *dl, int nd, int samples, int seeds,
                          int rows, int below, double rel)
{
    dp_error e = {0};
    double *r_s = calloc((size_t)seeds, sizeof(double)), lo, hi, srel = rel;
    int sbelow = below;
    if (!r_s) return 1;
    r_s[0] = rel;
    for (int i = 3; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == '-') { i++; continue; }
        dp_graph g;
        if (dp_graph_read(&g, argv[i], DP_FORMAT_AUTO, &e)) return die(&e);
        int *a = malloc(sizeof(int) * ((size_t)g.n_ops + 1));
        if (!a) return 1;
        for (int k = 0; k < nd; k++) {
            dp_cluster c;
            dp_place_opts po;
            dp_place_result pc, ph, pa;
            memset(&po, 0, sizeof po);
            if (dp_cluster_for_graph(&c, &g, dl[k], &e) || dp_place(DP_METHOD_CP, &g, &c, &po, a, &pc, &e) ||
                dp_place(DP_METHOD_HEFT, &g, &c, &po, a, &ph, &e))
                return die(&e);
            double h = pc.makespan < ph.makespan ? pc.makespan : ph.makespan;
            for (int si = 2; si <= seeds; si++) {
                dp_infer_opts io;
                double ms;
                memset(&io, 0, sizeof io);
                io.samples = samples; io.seed = (uint64_t)si; po.seed = (uint64_t)si;
                if (dp_policy_place(p, &g, &c, &io, a, NULL, &ms, &e) || dp_place(DP_METHOD_ANNEAL, &g, &c, &po, a, &pa, &e))
                    return die(&e);
                sbelow += ms <= h * (1 + 1e-9);
                r_s[si - 1] += ms / pa.makespan - 1;
            }
            dp_cluster_free(&c);
        }
        free(a);
        dp_graph_free(&g);
    }
    lo = hi = r_s[0];
    for (int si = 1; si < seeds; si++) {
        srel += r_s[si];
        if (r_s[si] < lo) lo = r_s[si];
        if (r_s[si] > hi) hi = r_s[si];
    }
    int n = rows * seeds;
    printf("seeds 1-%d (the policy's samples and anneal at seed s), %d placements: at or below min(cp, heft) %d (%.0f%%); "
           "doppler / anneal - 1: mean %+.1f%% (per seed %+.1f%% to %+.1f%%)\n",
           seeds, n, sbelow, 100.0 * sbelow / n, 100 * srel / n, 100 * lo / rows, 100 * hi / rows);
    free(r_s);
    return 0;
}

static int zeroshot(int argc, char **argv)
{
    const char *pol_path = argv[2], *devs = opt(argc, argv, "--devices", "2,4,8");
    int samples = atoi(opt(argc, argv, "--samples", "64")), nd = 0, dl[8];
    int polish = atoi(opt(argc, argv, "--polish", "0")), seeds = atoi(opt(argc, argv, "--seeds", "1"));
    dp_policy p;
    dp_error e = {0};
    char buf[64], *tok;
    snprintf(buf, sizeof buf, "%s", devs);
    for (tok = strtok(buf, ","); tok && nd < 8; tok = strtok(NULL, ",")) dl[nd++] = atoi(tok);
    if (dp_policy_load(&p, pol_path, &e)) return die(&e);
    int rows = 0, below = 0, pbelow = 0, pwin = 0;
    double rel = 0, t_pol = 0, t_ann = 0, worst_t = 0, worst_rel = -1, prel = 0, t_pp = 0, psrel = 0, hrel = 0;
    if (polish)
        printf("| graph | devices | doppler | cp | heft | anneal | doppler s | anneal s | <= cp, heft | doppler + polish | simulations | anneal, as many | polish s | cp or heft + polish |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    else
        printf("| graph | devices | doppler | cp | heft | anneal | doppler s | anneal s | <= cp, heft |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 3; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == '-') { i++; continue; }
        dp_graph g;
        if (dp_graph_read(&g, argv[i], DP_FORMAT_AUTO, &e)) return die(&e);
        int *a = malloc(sizeof(int) * ((size_t)g.n_ops + 1)), *ah = malloc(sizeof(int) * ((size_t)g.n_ops + 1));
        if (!a || !ah) return 1;
        for (int k = 0; k < nd; k++) {
            dp_cluster c;
            dp_infer_opts io;
            dp_place_opts po;
            dp_place_result pc, ph, pa;
            double ms, t0, tp, lb;
            memset(&io, 0, sizeof io); memset(&po, 0, sizeof po);
            io.samples = samples; io.seed = 1; po.seed = 1;
            if (dp_cluster_for_graph(&c, &g, dl[k], &e)) return die(&e);
            lb = dp_lower_bound(&g, &c);
            t0 = dp_now();
            if (dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &e)) return die(&e);
            tp = dp_now() - t0;
            if (dp_place(DP_METHOD_CP, &g, &c, &po, a, &pc, &e) || dp_place(DP_METHOD_HEFT, &g, &c, &po, ah, &ph, &e)) return die(&e);
            if (pc.makespan <= ph.makespan) memcpy(ah, a, sizeof(int) * (size_t)g.n_ops);   /* the better heuristic's */
            if (dp_place(DP_METHOD_ANNEAL, &g, &c, &po, a, &pa, &e)) return die(&e);
            double h = pc.makespan < ph.makespan ? pc.makespan : ph.makespan, r = ms / pa.makespan - 1;
            below += ms <= h * (1 + 1e-9);
            rel += r;
            if (r > worst_rel) worst_rel = r;
            t_pol += tp; t_ann += pa.seconds;
            if (tp / pa.seconds > worst_t) worst_t = tp / pa.seconds;
            rows++;
            printf("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.4f | %.3f | %s |", base(argv[i]), dl[k], ms / lb, pc.makespan / lb,
                   ph.makespan / lb, pa.makespan / lb, tp, pa.seconds, ms <= h * (1 + 1e-9) ? "yes" : "no");
            if (polish) {
                /* the same placement, then polished; anneal given as many simulations */
                long sims = 0;
                double mp;
                dp_place_result ps;
                io.polish = polish; io.simulations = &sims;
                t0 = dp_now();
                if (dp_policy_place(&p, &g, &c, &io, a, NULL, &mp, &e)) return die(&e);
                tp = dp_now() - t0;
                po.budget = sims > INT_MAX ? INT_MAX : (int)sims;
                if (dp_place(DP_METHOD_ANNEAL, &g, &c, &po, a, &ps, &e)) return die(&e);
                double psm = ps.makespan;
                pbelow += mp <= h * (1 + 1e-9);
                prel += mp / pa.makespan - 1;
                psrel += psm / pa.makespan - 1;
                pwin += mp <= psm * (1 + 1e-9);
                t_pp += tp;
                /* the control: the better heuristic's answer, polished alike */
                dp_place_opts pe;
                memset(&pe, 0, sizeof pe);
                pe.start = ah; pe.max_passes = polish;
                if (dp_place(DP_METHOD_ENUMOPT, &g, &c, &pe, a, &ps, &e)) return die(&e);
                hrel += ps.makespan / pa.makespan - 1;
                printf(" %.3f | %ld | %.3f | %.4f | %.3f |", mp / lb, sims, psm / lb, tp, ps.makespan / lb);
            }
            printf("\n");
            dp_cluster_free(&c);
        }
        free(a); free(ah);
        dp_graph_free(&g);
    }
    int nr = rows ? rows : 1;   /* the means' divisor */
    printf("\nzero-shot, %d placements: at or below min(cp, heft) %d (%.0f%%); doppler / anneal - 1: mean %+.1f%%, worst %+.1f%%; "
           "time: doppler %.2f s, anneal %.2f s (1/%.0f; worst placement 1/%.0f)\n",
           rows, below, 100.0 * below / nr, 100 * rel / nr, 100 * worst_rel, t_pol, t_ann,
           t_pol > 0 ? t_ann / t_pol : 0, worst_t > 0 ? 1 / worst_t : 0);
    if (polish)
        printf("with --polish %d: at or below min(cp, heft) %d (%.0f%%); / anneal - 1: mean %+.1f%%; at or below anneal given as many "
               "simulations %d of %d (that anneal: %+.1f%%); time %.2f s (1/%.0f of anneal's); the better of cp and heft so polished: %+.1f%%\n",
               polish, pbelow, 100.0 * pbelow / nr, 100 * prel / nr, pwin, rows,
               100 * psrel / nr, t_pp, t_pp > 0 ? t_ann / t_pp : 0, 100 * hrel / nr);
    if (seeds > 1 && rows > 0 && zeroshot_seeds(&p, argc, argv, dl, nd, samples, seeds, rows, below, rel)) return 1;
    dp_policy_free(&p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: learn_bench timing|quality GRAPH [options] | general STG_DIR [options]\n");
        return 2;
    }
    int devices = atoi(opt(argc, argv, "--devices", "4"));
    /* the training options, each 0 (the library's default) unless given */
    static const struct { const char *name; int *i; double *d; } train_opts[] = {
        {"--lr-sim", NULL, &lr_sim}, {"--eps-sim", NULL, &eps_sim}, {"--rollouts", &rollouts, NULL},
        {"--temp", NULL, &temp}, {"--sil", NULL, &sil}, {"--entropy", NULL, &ent},
        {"--greedy-baseline", &greedy_bl, NULL}, {"--adv-norm", &adv_norm, NULL}, {"--step-bl", &step_bl, NULL},
        {"--gamma", NULL, &gamma_}, {"--anchor-rate", NULL, &anchor_rate}, {"--select", &select_, NULL},
        {"--anchor", NULL, &anchor}, {"--hidden", &hidden, NULL}, {"--layers", &layers, NULL},
        {"--ppo", &ppo, NULL}, {"--ppo-clip", NULL, &ppo_clip}, {"--critic", &critic, NULL}, {"--critic-lr", NULL, &critic_lr},
        {"--reinforce", &pt_reinforce, NULL}, {"--tau", NULL, &pt_tau}, {"--insertion", &insertion, NULL},
        {"--op-logits", NULL, &op_logits}, {"--op-prior", NULL, &op_prior},
        {"--op-batch", &op_batch, NULL}, {"--op-elite", &op_elite, NULL}, {"--op-restart", &op_restart, NULL},
    };
    for (size_t k = 0; k < sizeof train_opts / sizeof train_opts[0]; k++) {
        const char *v = opt(argc, argv, train_opts[k].name, "0");
        if (train_opts[k].i) *train_opts[k].i = atoi(v);
        else *train_opts[k].d = atof(v);
    }
    placeto = !strcmp(opt(argc, argv, "--algo", "doppler"), "placeto");
    init_path = opt(argc, argv, "--init", NULL);
    per_seed = flag(argc, argv, "--per-seed");
    order = !strcmp(opt(argc, argv, "--order", "fifo"), "priority") ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
    if (!strcmp(argv[1], "timing")) return timing(argv[2], devices, atoi(opt(argc, argv, "--episodes", "300")));
    if (!strcmp(argv[1], "quality"))
        return quality(argv[2], devices, atoi(opt(argc, argv, "--il", "500")), atoi(opt(argc, argv, "--sim", "2000")),
                       atoi(opt(argc, argv, "--samples", "64")), (uint64_t)atoll(opt(argc, argv, "--seed", "1")),
                       atoi(opt(argc, argv, "--seeds", "1")));
    if (!strcmp(argv[1], "stability"))
        return stability(argv[2], devices, atoi(opt(argc, argv, "--il", "1000")), atoi(opt(argc, argv, "--sim", "20000")),
                         (uint64_t)atoll(opt(argc, argv, "--seed", "1")), atoi(opt(argc, argv, "--seeds", "10")));
    if (!strcmp(argv[1], "diag"))
        return diag(argv[2], devices, atoi(opt(argc, argv, "--il", "500")), atoi(opt(argc, argv, "--sim", "2000")),
                    (uint64_t)atoll(opt(argc, argv, "--seed", "1")), atoi(opt(argc, argv, "--window", "250")));
    if (!strcmp(argv[1], "zeroshot")) return zeroshot(argc, argv);
    if (!strcmp(argv[1], "general"))
        return general(argv[2], atoi(opt(argc, argv, "--procs", "4")), atoi(opt(argc, argv, "--il", "1000")),
                       atoi(opt(argc, argv, "--sim", "2000")));
    fprintf(stderr, "learn_bench: unknown mode '%s'\n", argv[1]);
    return 2;
}
