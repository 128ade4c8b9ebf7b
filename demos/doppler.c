/* doppler - the command-line front end of doppler.h.

       doppler info    GRAPH [--devices N | --cluster C] [--memory B] [--json]
       doppler place   GRAPH --method M [--devices N | --cluster C] [--memory B] [--seed S]
                       [--order fifo|priority] [--budget B] [--time-limit S] [--start ASSIGN] [--progress]
                       [--out ASSIGN] [--gantt OUT.svg [--no-transfers]] [--json]
       doppler sim     GRAPH --assign ASSIGN [--devices N | --cluster C] [--memory B]
                       [--order fifo|priority] [--gantt OUT.svg [--no-transfers]] [--json]
       doppler bench   GRAPH... [--methods m1,m2,...|all] [--devices N | --cluster C]
                       [--memory B] [--seed S] [--order O] [--budget B] [--time-limit S] [--json | --md]
       doppler train   GRAPH... --out POLICY.dpl [--devices N | --cluster C] [--memory B | --memory-ratio K]
                       [--stages il,sim,real] [--episodes E1,E2,..] [--lr L1,L2,..]
                       [--init POLICY.dpl|pretrained] [--hidden H] [--layers K]
                       [--shared-gnn] [--insertion] [--entropy B]
                       [--temperature T] [--greedy-baseline] [--self-imitation W]
                       [--adv-norm] [--ppo E] [--ppo-clip C] [--critic]
                       [--critic-lr L] [--reinforce] [--tau T]
                       [--op-logits R] [--op-prior K] [--op-restart N]
                       [--step-baseline on|off] [--anchor X|off]
                       [--anchor-rate R] [--select N|off] [--order fifo|priority]
                       [--seed S] [--time-limit S] [--progress] [--curve OUT.csv]
                       [--curve-svg OUT.svg] [--json]
       doppler place   GRAPH --method doppler [--policy POLICY.dpl] [--samples K] [--polish P]
                       [--improve E] [--time-limit S] [--progress] ...
       doppler convert IN OUT [--to FORMAT]
       doppler gen     layered|random [--nodes N] [--width W] [--density D]
                       [--regularity R] [--jump J] [--ccr C] [--seed S] -o GRAPH
       doppler gen     chainmm|ffnn|llama-block|llama-layer|gpt [--parts P] [--dim D]
                       [--batch B] [--layers L] [--vocab V] [--weights] -o GRAPH
       doppler exec    GRAPH --assign ASSIGN --backend cpu|cuda|mpi [--devices N | --cluster C]
                       [--memory B] [--reps R] [--json] ...
       doppler help [COMMAND]

   Every command that reads a graph takes --format F (native, doppler, stg,
   binary; default: detected from the content). Exit status: 0 success,
   1 failure (the library's message on stderr), 2 bad usage.
   Output paths are checked before any work: one that cannot be written
   exits 1, two naming one file (or an output that is an input) exit 2;
   '-' is standard output, and refused as an input (outs_check).
   Build: cc -std=gnu11 -O2 -I. -o build/doppler demos/doppler.c -lm -pthread
   With the CUDA executor (--backend cuda), one nvcc command:
       nvcc -O2 -I. -DDP_WITH_CUDA -o build/doppler demos/doppler.c doppler_cuda.cu -lpthread
   With the MPI executor (--backend mpi; run under mpirun, one process a
   machine), one mpicc command:
       mpicc -std=gnu11 -O2 -I. -DDP_WITH_MPI -o build/doppler_mpi demos/doppler.c -lm -pthread
*/
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define DEFAULT_DEVICES 4

/* Under mpirun (a build with -DDP_WITH_MPI running exec, calibrate or
   train with --backend mpi; main sets on, rank and size once): rank 0
   prints and writes, the others stay quiet except when a rank is lost
   (DP_ERR_PEER: rank 0 may be the one), which every rank reports; each
   rank keeps its last failure for mpi_step; lost makes main end with
   MPI_Abort, as MPI_Finalize could wait for the lost rank forever. */
typedef struct cli_mpi_state {
    int on, rank, size, lost;
    dp_error last;
#ifdef DP_WITH_MPI
    dp_mpi_opts mo;   /* every MPI step's options: --mpi-timeout */
#endif
} cli_mpi_state;
static cli_mpi_state cli_mpi;

/* ----------------------------------------------------------------------
   help texts
   ---------------------------------------------------------------------- */
static const char *help_main =
    "doppler " DP_VERSION " - device placement of dataflow graphs\n"
    "\n"
    "usage: doppler COMMAND [ARGS] [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  info     statistics of a graph and the lower bound on its makespan\n"
    "  place    place a graph with one method, write the assignment\n"
    "  sim      simulate a given assignment\n"
    "  bench    every (graph, method) pair: makespan, lower bound, ratio, seconds\n"
    "  train    train a DOPPLER (SEL/PLC) or Placeto policy on one graph or a family\n"
    "  convert  convert a graph between formats\n"
    "  gen      generate a random DAG (layered, random) or a workload (chainmm, ffnn,\n"
    "           llama-block, llama-layer, gpt)\n"
    "  exec     run a placed graph for real on the CPU or CUDA executor\n"
    "  calibrate  measure this machine (CPU or GPUs) into a cluster file\n"
    "  help     this text, or 'doppler help COMMAND'\n"
    "\n"
    "methods: single, round-robin, random, cp, heft, enumopt, anneal, pipeline,\n"
    "         doppler (--policy POLICY.dpl, or the pretrained policy), placeto\n"
    "         (--policy POLICY.dpl)\n"
    "formats: native (.dpg), doppler (the DOPPLER reference's .txt), stg (.stg),\n"
    "         binary (.dpb: read at disk speed, for graphs read many times)\n"
    "cluster: --devices N (N devices in the graph's own units; default 4, or the\n"
    "         graph's per-device time columns when it has them) or --cluster C\n"
    "         where C is a cluster file (.dpc) or a preset: reference, homogeneous:N,\n"
    "         or real GPUs (seconds, FLOP/s, bytes: for graphs of FLOPs and bytes such\n"
    "         as onnx2dpg.py writes): h100-sxm:N, h200-sxm:N, h100-pcie:N,\n"
    "         a100-sxm:N, a100-pcie:N (N = 1..8), at --precision fp32 (default),\n"
    "         tf32, bf16, fp16 or fp8 (H100/H200); see doppler.h >>api-cluster;\n"
    "         --memory B sets every device's memory to B bytes (0: unlimited)\n"
    "memory:  ops' outputs, workspaces and resident bytes (weights; a weight shared\n"
    "         by ops on several devices is held on each) must fit each device's\n"
    "         memory: the placers keep within it, sim and exec refuse a placement\n"
    "         whose simulated peak passes it\n"
    "files:   - is standard output as an output (one at most), refused as an input\n"
    "exit status: 0 success, 1 failure, 2 bad usage\n";

static const char *help_help =
    "usage: doppler help [COMMAND]\n"
    "\n"
    "Without COMMAND: the commands, methods, formats and cluster options. With\n"
    "one: its usage and every option it accepts ('doppler COMMAND --help' says\n"
    "the same). Commands: info, place, sim, bench, train, convert, gen, exec,\n"
    "calibrate, help.\n";

/* The cluster options after --cluster that info, place, sim, bench and
   exec share (train's help has its own, one column wider). */
#define HELP_CLUSTER_MORE                                                             \
    "  --precision P  a GPU preset's precision: fp32 (default), tf32, bf16, fp16, fp8\n" \
    "  --memory B     every device's memory, in bytes (0: unlimited, the default;\n"   \
    "                 replaces the cluster's)\n"                                       \
    "  --machines K   the devices in K machines (nodes) of consecutive devices,\n"     \
    "  --internode B[,L]  and the links between machines: B bytes per time unit,\n"    \
    "                 latency L (default 0)\n"

static const char *help_info =
    "usage: doppler info GRAPH [--devices N | --cluster C] [--memory B] [--format F]\n"
    "                          [--json]\n"
    "\n"
    "Prints nodes, edges, sources, sinks, depth (ops on the longest chain), total\n"
    "compute, total edge bytes, the critical-path length (fastest device, no\n"
    "communication), the work bound (total work / devices) and the lower bound on\n"
    "the makespan for the cluster (their maximum); then the resident memory: the\n"
    "number of weights, the resident bytes in all (every op's own resident bytes,\n"
    "each weight an op uses once) and the most one op holds (its own and its\n"
    "weights'), and the devices' memory.\n"
    "\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N, h100-sxm:N, ...)\n"
    HELP_CLUSTER_MORE
    "  --format F     graph format: native, doppler, stg, binary (default: detect)\n"
    "  --json         one JSON object (weights, resident_bytes, max_op_resident,\n"
    "                 max_op_resident_op, memory: each device's)\n";

static const char *help_place =
    "usage: doppler place GRAPH --method M [--devices N | --cluster C] [OPTIONS]\n"
    "\n"
    "Places every op of GRAPH on a device with method M, prints the simulated\n"
    "makespan with its ratio to the lower bound and the load and peak memory of\n"
    "each device. Every method keeps within the devices' memory (or fails when no\n"
    "placement it finds fits) and is never worse than one device: when the best\n"
    "single device that fits beats the method's answer, or the method found none\n"
    "within memory, that device is the answer and the output says so (fallback).\n"
    "\n"
    "  --method M     single, round-robin, random, cp, heft, enumopt, anneal,\n"
    "                 pipeline (the ops in topological order cut into at most N\n"
    "                 stages of balanced compute, stage k on device k), doppler\n"
    "                 or placeto\n"
    "  --policy P     doppler, placeto: the policy file written by 'doppler train'\n"
    "                 (its algorithm must match the method); doppler without it:\n"
    "                 the pretrained policy (policies/doppler_family.dpl)\n"
    "  --samples K    doppler, placeto: best of the greedy placement and K samples\n"
    "                 (default 0; 64 with the pretrained policy)\n"
    "  --threads T    doppler: draw the samples on T threads (default 1); the\n"
    "                 same answer with any T (each sample has its own stream;\n"
    "                 the count of simulations may vary: a sample stops once\n"
    "                 it cannot beat the best so far of any thread)\n"
    "  --improve E    doppler: first E more REINFORCE episodes on this graph\n"
    "                 (DOPPLER's deployment stage, on the simulator; the policy\n"
    "                 file is not changed); the answer is the best placement any\n"
    "                 of them or of the samples reached\n"
    "  --op-logits R  with --improve: those episodes learn per-op logits from\n"
    "                 the policy's placement at rate R (e.g. 3) instead of\n"
    "                 tuning the network (see 'doppler help train')\n"
    "  --op-prior K   with --op-logits: the start's logit (default: a sample\n"
    "                 moves 3 ops on average)\n"
    "  --op-restart N with --op-logits: batches without a new best before the\n"
    "                 logits start again around the best (default 8, -1 never)\n"
    "  --polish P     doppler, placeto: then local search from the policy's\n"
    "                 answer, at most P passes (1..100) of enumopt's moves:\n"
    "                 each op tried on every other device, a strict gain kept\n"
    "  --from M       placeto: the placement its sweep starts from (default cp)\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N, h100-sxm:N, ...)\n"
    HELP_CLUSTER_MORE
    "  --seed S       seed of random, anneal and doppler's samples (default 1;\n"
    "                 the other methods do not depend on it)\n"
    "  --order O      runtime order scoring placements: fifo (default), priority\n"
    "                 (doppler: SEL's op order is the priority)\n"
    "  --budget B     anneal: simulations (default 20 x ops x devices, stopped\n"
    "                 after 30 s if not spent by then: the output says so)\n"
    "  --time-limit S anneal, enumopt, and doppler's and placeto's samples,\n"
    "                 --improve and --polish: stop the search S seconds after\n"
    "                 it began with the best placement found so far (the output\n"
    "                 says so; timing makes the answer vary from run to run);\n"
    "                 enumopt's passes without it: at most 30 s (said so)\n"
    "  --start A      enumopt, anneal: initial assignment file (default: cp's; a\n"
    "                 .json name: a mapping file, as --out writes)\n"
    "  --progress     the searches (as --time-limit): how far, the best makespan\n"
    "                 and the time left on stderr about once a second (without\n"
    "                 it too when stderr is a terminal)\n"
    "  --out A, -o A  write the assignment (line i: device of node i); A ending\n"
    "                 in .json: the mapping {source name: device} (the names the\n"
    "                 ops had in the model, e.g. ONNX node names; op names where\n"
    "                 there are none; see README, From a model to a placed model)\n"
    "  --gantt F.svg  write an SVG Gantt chart of the simulated schedule (with\n"
    "                 each device's peak memory)\n"
    "  --no-transfers with --gantt: leave the transfer arrows out of the chart\n"
    "  --format F     graph format: native, doppler, stg, binary (default: detect)\n"
    "  --json         one JSON object (with the assignment and fallback: \"single\"\n"
    "                 when the best single device was the answer, else null;\n"
    "                 doppler adds sel_order, the ops in the order SEL chose them;\n"
    "                 with --time-limit, or where anneal's or enumopt's default\n"
    "                 time bound stopped it, time_limited and stopped_by:\n"
    "                 \"time-limit\", \"time-bound\" or null)\n";

static const char *help_sim =
    "usage: doppler sim GRAPH --assign A [--devices N | --cluster C] [OPTIONS]\n"
    "\n"
    "Simulates the assignment in file A (line i: device of node i, '#' comments)\n"
    "on the work-conserving runtime and prints the makespan with its ratio to the\n"
    "lower bound, and per device its ops, busy time, utilisation and peak memory.\n"
    "A placement whose peak passes a device's memory is refused (exit 1, the\n"
    "device, its peak and its memory named; no chart written).\n"
    "\n"
    "  --assign A     assignment file (required; a .json name: a mapping file,\n"
    "                 as place --out F.json writes, matched by source names)\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N, h100-sxm:N, ...)\n"
    HELP_CLUSTER_MORE
    "  --order O      fifo (default: earliest ready first) or priority (b-level)\n"
    "  --gantt F.svg  write an SVG Gantt chart of the schedule (with each device's\n"
    "                 peak memory)\n"
    "  --no-transfers with --gantt: leave the transfer arrows out of the chart\n"
    "  --format F     graph format: native, doppler, stg, binary (default: detect)\n"
    "  --json         one JSON object, with every op as\n"
    "                 ops: [{\"node\": i, \"device\": d, \"start\": t0, \"end\": t1}, ...]\n";

static const char *help_bench =
    "usage: doppler bench GRAPH... [--methods m1,m2,...] [OPTIONS]\n"
    "\n"
    "Places every graph with every method; one row per (graph, method) with the\n"
    "makespan, the lower bound, their ratio and the seconds the placer took. A\n"
    "method that finds no placement within the devices' memory gets 'infeasible'\n"
    "(its reason on stderr; JSON: infeasible true, makespan null, reason) and the\n"
    "table goes on: the exit status stays 0. A makespan marked '*' is a fallback's:\n"
    "the best single device's, which beat the method's own answer (JSON: fallback\n"
    "\"single\"), or for a learned method whose every placement met a memory dead\n"
    "end, pipeline's (JSON: fallback \"pipeline\").\n"
    "\n"
    "  --methods L    comma-separated methods, or all (default: all: single,\n"
    "                 round-robin, random, cp, heft, enumopt, anneal, pipeline, and\n"
    "                 doppler and placeto when their policies are given)\n"
    "  --policy P     the policy of method doppler or placeto (give it twice for\n"
    "                 both: one file of each algorithm); doppler without it: the\n"
    "                 pretrained policy (policies/doppler_family.dpl)\n"
    "  --samples K    doppler, placeto: best of greedy and K samples (default 0;\n"
    "                 64 with the pretrained policy)\n"
    "  --from M       placeto: the placement its sweep starts from (default cp)\n"
    "  --devices N    N devices in each graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N, h100-sxm:N, ...)\n"
    HELP_CLUSTER_MORE
    "  --seed S       seed of random and anneal (default 1)\n"
    "  --order O      fifo (default) or priority\n"
    "  --budget B     anneal: simulations (default 20 x ops x devices, stopped\n"
    "                 after 30 s if not spent by then: marked '~')\n"
    "  --time-limit S anneal, enumopt, doppler, placeto: at most S seconds of\n"
    "                 search a graph, the best placement found so far then\n"
    "                 (marked '~'; JSON: time_limited, stopped_by); enumopt\n"
    "                 without it: at most 30 s a graph (marked '~')\n"
    "  --progress     the searches' progress on stderr about once a second\n"
    "                 (without it too when stderr is a terminal)\n"
    "  --format F     graph format: native, doppler, stg, binary (default: detect)\n"
    "  --json         a JSON array, one object per row\n"
    "  --md           the table as markdown\n";

static const char *help_train =
    "usage: doppler train GRAPH... --out POLICY.dpl [OPTIONS]\n"
    "\n"
    "Trains a DOPPLER policy (SEL picks the next op, PLC its device) on one graph\n"
    "or a family of graphs (each episode draws one; all must fit the cluster) and\n"
    "writes it to POLICY.dpl. Stages: il imitates the critical-path expert; sim is\n"
    "REINFORCE against the simulator; real is REINFORCE against a runtime's cost:\n"
    "the executor's measured wall time with --backend cpu|cuda, else the simulator\n"
    "(said in the output). On a terminal\n"
    "one line shows the progress; otherwise one summary line per stage (and\n"
    "with --progress, or stderr a terminal, progress lines on stderr).\n"
    "With --algo placeto it trains a Placeto policy instead: each episode sweeps\n"
    "the ops in topological order from a starting placement (--from), moving each\n"
    "to the device the policy picks, stage sim only; at every step the op is\n"
    "simulated on every device and the policy moves toward the devices that\n"
    "lower the makespan (--tau; --reinforce: the paper's REINFORCE on the\n"
    "per-move makespan gains instead). A placeto policy is tied to the\n"
    "cluster's device count.\n"
    "\n"
    "  --out P, -o P   the policy file to write (required)\n"
    "  --init P        go on training the policy in file P (its algorithm,\n"
    "                  sizes and --insertion), or the pretrained one with\n"
    "                  --init pretrained: e.g. --stages sim on one graph\n"
    "  --algo A        doppler (default) or placeto\n"
    "  --from M        placeto: the starting placement's method (default cp; any\n"
    "                  of single, round-robin, random, cp, heft, enumopt, anneal,\n"
    "                  pipeline)\n"
    "  --devices N     N devices in the graphs' units (default 4); a list such\n"
    "                  as 2,4,8 trains on every graph at each count (doppler)\n"
    "  --cluster C     cluster file or preset (reference, homogeneous:N, h100-sxm:N, ...)\n"
    "  --precision P   a GPU preset's precision: fp32 (default), tf32, bf16, fp16, fp8\n"
    "  --memory B      every device's memory, in bytes (0: unlimited, the default;\n"
    "                  replaces the cluster's)\n"
    "  --machines K    the devices in K machines (nodes) of consecutive devices,\n"
    "  --internode B[,L]  and the links between machines: B bytes per time unit,\n"
    "                 latency L (default 0)\n"
    "  --memory-ratio K  graphs that hold weights (resident bytes) train on devices\n"
    "                  of their one-device memory / K each (a list: one K per\n"
    "                  --devices count); the others stay unlimited\n"
    "  --stages L      any of il,sim,real in that order (default il,sim;\n"
    "                  placeto: sim)\n"
    "  --episodes L    episodes per listed stage, e.g. 2000,2000 (default 2000 each)\n"
    "  --lr L          learning rate per listed stage, or one for all\n"
    "                  (default 1e-3 il, 5e-4 sim and real; placeto 3e-3)\n"
    "  --hidden H      embedding size (default 32)\n"
    "  --layers K      message-passing rounds (default 3); placeto: pairs of\n"
    "                  forward and backward passes (default 1)\n"
    "  --shared-gnn    one GNN for SEL and PLC\n"
    "  --insertion     the partial schedule PLC sees (and the cp expert of\n"
    "                  stage il follows) lets an op start in an idle gap of\n"
    "                  its device, as HEFT and the FIFO runtime do, instead\n"
    "                  of after the device's last op; saved with the policy\n"
    "                  (the pretrained policy's)\n"
    "  --entropy B     entropy bonus weight (default 1e-3; not used by placeto)\n"
    "  --rollouts K    REINFORCE stages: K episodes of one graph per update, each\n"
    "                  one's baseline the mean cost of the other K - 1 (default 1:\n"
    "                  an update per episode, baseline the running mean)\n"
    "  --temperature T REINFORCE stages: sample from softmax(logits / T)\n"
    "                  (default 1; greedy choices do not depend on it)\n"
    "  --greedy-baseline  REINFORCE stages: each update also runs the greedy\n"
    "                  policy (one more simulation) and its cost is the baseline\n"
    "  --self-imitation W  REINFORCE stages: also push toward the best placement\n"
    "                  found so far, weight W times its gain over the baseline\n"
    "                  (default 0: none)\n"
    "  --adv-norm      REINFORCE stages: divide returns by their running RMS\n"
    "  --ppo E         REINFORCE stages: PPO's clipped objective, E gradient\n"
    "                  steps per update over its episodes (default 1: the\n"
    "                  paper's REINFORCE, one step)\n"
    "  --ppo-clip C    PPO's clip range: ratios outside [1 - C, 1 + C] stop\n"
    "                  pushing (default 0.2)\n"
    "  --critic        REINFORCE stages: the per-step baseline is a learned\n"
    "                  critic's (a linear value function of the partial\n"
    "                  schedule, shared by the graphs) instead of running means\n"
    "  --critic-lr L   the critic's learning rate (default 1e-2)\n"
    "  --op-logits R   one GRAPH: stages sim and real learn per-op logits at\n"
    "                  rate R (e.g. 3) instead of the network's weights: op v\n"
    "                  goes to device d with probability softmax(theta_v)_d,\n"
    "                  theta_v starting at --op-prior on the device of the\n"
    "                  network's placement (greedy + 64 samples); every 32\n"
    "                  episodes the logits move toward the 2 cheapest (the\n"
    "                  cross-entropy method; Post, Gao et al. 2018); they end\n"
    "                  centred on the best placement found. Saved in the\n"
    "                  policy, used on this graph and cluster only\n"
    "  --op-prior K    with --op-logits: the start's logit (default: the one\n"
    "                  at which a sample moves 3 ops on average)\n"
    "  --op-restart N  with --op-logits: after N batches in a row without a\n"
    "                  new best placement the logits start again, at the\n"
    "                  prior on the best one's devices (default 8, -1 never)\n"
    "  --reinforce     placeto: the paper's update, REINFORCE over sampled\n"
    "                  sweeps, instead of the one-step improvement\n"
    "  --tau T         placeto's one-step improvement: the policy moves toward\n"
    "                  p_d e^(r_d / T), r_d the makespan decrease of device d\n"
    "                  over the starting makespan (default 0.01)\n"
    "  --step-baseline on|off  REINFORCE stages: credit each step with the cost\n"
    "                  the partial schedule had not yet fixed, against that\n"
    "                  step's running mean (or the other rollouts' mean; default\n"
    "                  on, but not with --greedy-baseline; every cost here is\n"
    "                  in the graph's time units)\n"
    "  --anchor X|off  REINFORCE stages: keep the policy within X nats of the\n"
    "                  cp expert (mean -log P(expert's choice)): the imitation\n"
    "                  loss is added with a weight that grows while the policy\n"
    "                  is farther, so it cannot saturate onto one device\n"
    "                  (default 4; off: the paper's REINFORCE)\n"
    "  --anchor-rate R how fast that weight moves (default 1e-3)\n"
    "  --time-limit S  stop training after the first episode that ends S seconds\n"
    "                  after it began: the policy at the stop is written (a stage\n"
    "                  with --select keeps its best-scored parameters; the later\n"
    "                  stages do not run) and the output says so\n"
    "  --progress      the stage, episodes run, best cost and time left on stderr\n"
    "                  about once a second where the terminal display is not\n"
    "                  shown (without it too when stderr is a terminal)\n"
    "  --select N|off  REINFORCE stages: score the greedy placement every N\n"
    "                  episodes (and at the stage's start and end) and keep the\n"
    "                  best parameters, so that a stage cannot end worse than\n"
    "                  it started by its own cost (default: every 1/20 of the\n"
    "                  stage; in stage real with --backend each score is a run)\n"
    "  --out-assign A  (one graph) write the best placement any episode reached\n"
    "                  (A ending in .json: as a mapping, like place --out)\n"
    "                  (il and sim; real alone when it has its own cost)\n"
    "  --order O       runtime order: fifo (default) or priority (SEL's order)\n"
    "  --seed S        seed of the initial weights and of training (default 1)\n"
    "  --curve F.csv   one row per episode: stage,episode,graph,cost,lower_bound,\n"
    "                  ratio,best,epsilon,lr,loss,entropy,seconds\n"
    "  --curve-svg F   plot of cost / lower bound per episode\n"
    "  --format F      graph format: native, doppler, stg, binary (default: detect)\n"
    "  --backend B     stage real: cpu, cuda or mpi (the CPU, CUDA or MPI executor;\n"
    "                  mpi: one GRAPH, build/doppler_mpi under mpirun, rank 0\n"
    "                  training and writing, every rank running each placement);\n"
    "                  default: the simulator\n"
    "  --reps R        stage real with --backend: runs per episode, median (default 1)\n"
    "  --mpi-timeout S with --backend mpi: seconds a rank waits for another before\n"
    "                  it names it lost (default 30 in a run; 60 between runs, when\n"
    "                  rank 0 trains and beats once a second)\n"
    "  --mpi-devices D with --backend mpi: cpu (default) or cuda, each rank's GPUs\n"
    "                  (see doppler help exec)\n"
    "  --dispatch D    stage real with --backend cuda: dynamic (default), static or\n"
    "                  graph (see doppler help exec)\n"
    "  --json          the final summary as one JSON object\n"
    "\n"
    "A cost, loss or gradient that is not finite (NaN or inf) stops training\n"
    "with a message naming the stage, episode and graph; the policy as after the\n"
    "last good episode is then written to --out (nothing when no episode\n"
    "completed) and the exit status is 1. A policy that is not finite is never\n"
    "written, and an existing --out is replaced only by a complete file.\n";

static const char *help_convert =
    "usage: doppler convert IN OUT [--to FORMAT] [--format F]\n"
    "\n"
    "Reads IN (any readable format) and writes OUT in FORMAT (default: from OUT's\n"
    "extension: .dpg native, .txt doppler, .stg stg, .dpb binary; otherwise\n"
    "native). OUT '-' is standard output. The binary format (.dpb) holds all a\n"
    "native file does, is read many times faster and is checked (its counts,\n"
    "offsets and checksums) before anything in it is used.\n"
    "\n"
    "  --to FORMAT    native, doppler, stg, binary\n"
    "  --format F     format of IN (default: detect)\n";

static const char *help_exec =
    "usage: doppler exec GRAPH --assign A --backend cpu|cuda [OPTIONS]\n"
    "       mpirun -np K doppler_mpi exec GRAPH --assign A --backend mpi [OPTIONS]\n"
    "\n"
    "Runs GRAPH for real with the placement in A (an assignment file, or a\n"
    "mapping file F.json) on the threaded CPU executor\n"
    "(one compute and one copy thread per device) or the CUDA executor (the\n"
    "devices are logical devices on the GPUs present: device d on GPU d mod G,\n"
    "several sharing a GPU where there are fewer GPUs than devices) and reports\n"
    "the median wall time, each device's busy time, the simulator's prediction\n"
    "for the same placement, and whether the outputs equal a single-device\n"
    "run's (CUDA: also whether they are within the stated tolerance of the CPU\n"
    "executor's). mpi (a build with mpicc, under mpirun): one process (rank) per\n"
    "machine of the cluster (--machines K, a cluster file's 'nodes K'), each\n"
    "running its machine's devices on the CPU executor's kernels, cross-machine\n"
    "tensors as MPI messages; every rank reads the same files (checked), rank 0\n"
    "prints and writes. Real ops (from 'doppler gen chainmm|ffnn|llama-*') run their\n"
    "kernels; opaque ops run as busy kernels of their modelled time (the\n"
    "single-device run takes 0.1 s). A placement whose simulated peak passes a\n"
    "device's memory is refused before anything runs (exit 1).\n"
    "\n"
    "  --backend B    cpu, cuda (a build with nvcc; a GPU) or mpi (a build with\n"
    "                 mpicc, under mpirun: build/doppler_mpi)\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file (one from 'doppler calibrate') or preset\n"
    HELP_CLUSTER_MORE
    "  --format F     graph format: native, doppler, stg, binary (default: detect)\n"
    "  --reps R       runs; the median is reported (default 3)\n"
    "  --order O      fifo (default) or priority (b-level)\n"
    "  --dispatch D   cuda: dynamic (default: each device takes its next ready op\n"
    "                 when free, the host launching each) or static (the whole run\n"
    "                 enqueued at once in the simulator's order, events carrying\n"
    "                 the dependencies; every buffer held to the end) or graph\n"
    "                 (static's, captured once as a CUDA graph, one launch per run)\n"
    "  --precision P  cuda: the matmuls' arithmetic: fp32 (the exact FP32 kernel),\n"
    "                 tf32 or bf16 (tensor cores, FP32 accumulation; a GPU of\n"
    "                 compute capability 8.0+); default tf32 where the GPUs and\n"
    "                 the build have it, else fp32. With a preset --cluster it is\n"
    "                 the preset's precision as well. cpu: fp32 only\n"
    "  --seed S       contents of the input tensors (default 1)\n"
    "  --trace-svg F  a Gantt chart of the measured schedule\n"
    "  --no-verify    skip the single-device comparison\n"
    "  --no-link-pacing  cuda: copies between logical devices on one GPU at the\n"
    "                 GPU's own speed (default: each takes its link's modelled\n"
    "                 time, latency + bytes / bandwidth, on the GPU's clock)\n"
    "  --mpi-timeout S  mpi: seconds a rank waits for another before it names it\n"
    "                 lost and every rank stops (default 30; ranks beat every S/4)\n"
    "  --mpi-devices D  mpi: what each rank runs its devices on: cpu (default, the\n"
    "                 CPU executor's kernels) or cuda (its GPUs, as --backend cuda;\n"
    "                 a build with nvcc and mpicc; digest as --backend cuda's)\n"
    "  --json         wall_median, wall_runs, busy, predicted, outputs_match;\n"
    "                 cuda: gpus, precision, sharing (partitions, shared or\n"
    "                 none), sms, cpu_max_error, cpu_tolerance, outputs_match_cpu\n";

static const char *help_calibrate =
    "usage: doppler calibrate --backend cpu|cuda [--devices N] [--precision P] -o CLUSTER [--json]\n"
    "       mpirun -np K doppler_mpi calibrate --backend mpi [--devices N] -o CLUSTER\n"
    "\n"
    "Measures this machine and writes a cluster file of N devices for the\n"
    "simulator: 'doppler sim GRAPH --cluster CLUSTER'. cpu: N CPU devices\n"
    "(default 2): each op kind's speed at tensor sides 16..512, the executor's\n"
    "per-op overhead, its hand-off latency and bandwidth between devices; about\n"
    "3 s, run it on a quiet machine. cuda: N logical devices on the GPUs (default\n"
    "one per GPU; more share them as 'doppler exec --backend cuda' does): each op\n"
    "kind's speed at sides 16..512 and the per-op overhead from chains of ops\n"
    "the executor runs, and its hand-off latency, all under --dispatch D\n"
    "(dynamic, static or graph: the dispatch the runs will use; default dynamic)\n"
    "and --precision P; about 100 executor runs.\n"
    "mpi: K machines (the ranks) of N CPU devices each (default 1): the kernels\n"
    "measured on every rank at once and rank 0's kept for every machine, the\n"
    "bandwidth between machines from 4 MiB ping-pongs, the hand-off latency and\n"
    "per-op overhead from the MPI executor's own chains; rank 0 writes CLUSTER.\n"
    "\n"
    "  --backend B    cpu, cuda (a build with nvcc; a GPU) or mpi (build/doppler_mpi\n"
    "                 under mpirun)\n"
    "  --devices N    devices (cpu: default 2; cuda: default one per GPU; mpi:\n"
    "                 devices a machine, default 1)\n"
    "  --dispatch D   cuda: dynamic (default), static or graph\n"
    "  --precision P  cuda: the matmul measured: fp32, tf32 or bf16 (default as\n"
    "                 exec's: tf32 where the GPUs and the build have it)\n"
    "  --mpi-timeout S  mpi: seconds a rank waits for another (default 600)\n"
    "  --mpi-devices D  mpi: cpu (default) or cuda: each rank's GPUs measured as\n"
    "                 --backend cuda measures them (devices a machine: --devices)\n"
    "  --out C, -o C  the cluster file to write (required)\n"
    "  --json         one JSON object: devices, backend, matmul_flops, bandwidth,\n"
    "                 latency, overhead, out; mpi: machines, internode_bandwidth,\n"
    "                 internode_latency\n";

static const char *help_gen =
    "usage: doppler gen layered|random [OPTIONS] -o GRAPH\n"
    "       doppler gen chainmm|ffnn|llama-block|llama-layer|gpt [--parts P]\n"
    "                   [--dim D] [--batch B] [--layers L] [--vocab V] [--weights]\n"
    "                   -o GRAPH\n"
    "\n"
    "layered, random: a random DAG in the manner of DAGGEN: ops in levels, costs\n"
    "uniform in [1, 10]. layered: edges between consecutive levels only.\n"
    "chainmm, ffnn: a block-partitioned workload of real tensor ops (inputs,\n"
    "block matmuls, reductions of partial sums, relu) that 'doppler exec' runs:\n"
    "chainmm multiplies L+1 DxD matrices, ffnn applies L layers relu(X W) to a\n"
    "BxD input, llama-block is one Llama-style block (rmsnorm, P attention\n"
    "heads, output projection, gated SiLU MLP, residuals) on B tokens of width\n"
    "D, llama-layer L such blocks, gpt a GPT-style decoder of L blocks\n"
    "(layernorm, P attention heads, output projection, a GELU MLP 4D wide,\n"
    "residuals) then a final layernorm and the language-model head (D x V);\n"
    "every matrix is cut into PxP blocks (defaults P 2, D 256, B 64, L 3,\n"
    "V 8D). Costs in FLOPs; calibrate the cluster with 'doppler calibrate'.\n"
    "With --weights the weight matrices' blocks are the graph's weights,\n"
    "resident on every device that runs an op using them (placement and the\n"
    "simulator; the ops are then opaque).\n"
    "\n"
    "Each option applies to the shapes named below; given for another shape it\n"
    "is an error (exit 2).\n"
    "\n"
    "  layered, random:\n"
    "  --nodes N       ops (default 100)\n"
    "  --width W       mean ops per level (default sqrt(nodes))\n"
    "  --density D     probability of each candidate edge (default 0.3)\n"
    "  --regularity R  1 = all levels the same size (default 0.5)\n"
    "  --jump J        random: levels an edge may span (default 3; layered: 1)\n"
    "  --ccr C         mean transfer time / mean op time (default 0: none)\n"
    "  --seed S        seed (default 1)\n"
    "  workloads (see above; --batch not chainmm, --layers not llama-block):\n"
    "  --parts P, --dim D, --batch B, --layers L\n"
    "  --vocab V       gpt: the vocabulary (default 8 D, a multiple of P)\n"
    "  --weights       workloads: weight matrices as resident weights\n"
    "  --out G, -o G   output graph ('-' = standard output; format by extension)\n";

/* ----------------------------------------------------------------------
   options
   ---------------------------------------------------------------------- */
typedef struct cli {
    const char *cmd;
    const char **pos;       /* positional arguments, at most argc of them */
    int n_pos;
    int devices, devices_set;
    int dev_list[8], n_dev_list;   /* train: --devices 2,4,8 (a family) */
    const char *cluster;
    const char *precision;  /* a GPU preset's */
    const char *machines, *internode;  /* --machines K --internode B[,L] */
    double internode_bw, internode_lat;  /* B and L, parsed in main */
    double memory;          /* --memory BYTES: every device's (0 unlimited) */
    int memory_set;
    double mem_ratio[8];    /* train --memory-ratio K,...: one per device count */
    int n_mem_ratio;
    dp_format fmt;
    int json, md, no_transfers;
    const char *method, *methods, *assign, *start, *out, *gantt, *to;
    uint64_t seed;
    dp_order order;
    int budget;
    double time_limit;     /* the searches (place, bench) and train: seconds (0: none) */
    /* learning */
    const char *policy, *policy2, *stages, *episodes, *lr, *curve, *curve_svg;
    const char *algo, *from, *init;
    int hidden, layers, shared_gnn, insertion, samples, samples_set, entropy_set, rollouts, improve;
    int polish;             /* --polish P: local search from a policy's answer */
    int threads;            /* --threads T: doppler's samples on T threads */
    int greedy_baseline, adv_norm, step_baseline;   /* step_baseline: 0 on, -1 off */
    int ppo;                /* --ppo E: PPO epochs (0: REINFORCE)       */
    double ppo_clip;
    int critic;
    double critic_lr, op_logits, op_prior;
    int op_restart;         /* --op-restart N: 0 default, -1 never      */
    int reinforce;          /* --reinforce: placeto's REINFORCE update  */
    double tau;             /* --tau: placeto's one-step improvement    */
    double entropy, temperature, self_imitation;
    double anchor, anchor_rate;                      /* anchor: 0 default, < 0 off */
    int select;                                      /* 0 default, < 0 off */
    const char *out_assign;
    dp_gen_opts gen;
    dp_workload_opts wl;
    /* executor */
    const char *backend, *trace_svg;
    int reps, no_verify;
    int no_link_pacing;     /* --no-link-pacing: cuda copies within a GPU unpaced */
    double mpi_timeout;     /* --mpi-timeout: seconds a rank waits for another (0: the library's) */
    const char *mpi_devices; /* --mpi-devices: cpu (default) or cuda, a rank's devices */
    dp_dispatch_mode dispatch;
    int progress;           /* --progress: the searches' and training's on stderr */
    char given[1024];       /* " name" of every option given, once each   */
} cli;

static int usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    if (cli_mpi.on) {
        cli_mpi.last.code = DP_ERR_ARG;
        va_start(ap, fmt);
        vsnprintf(cli_mpi.last.msg, sizeof cli_mpi.last.msg, fmt, ap);
        va_end(ap);
        if (cli_mpi.rank != 0) return EXIT_USAGE;
    }
    fprintf(stderr, "doppler%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'doppler help%s%s'.\n", cmd ? " " : "", cmd ? cmd : "");
    return EXIT_USAGE;
}

static int fail(const dp_error *e)
{
    if (cli_mpi.on) {
        cli_mpi.last = *e;
        if (e->code == DP_ERR_PEER) cli_mpi.lost = 1;
        else if (cli_mpi.rank != 0) return EXIT_FAIL;
    }
    fprintf(stderr, "doppler: %s\n",
            e->msg[0] ? e->msg : dp_code_text(e->code ? e->code : DP_ERR_ARG));
    return EXIT_FAIL;
}

/* Under mpirun: this rank's outcome of a step before a collective one
   (reading the inputs, checking the outputs), agreed by every rank, so
   that a failure on any rank fails them all with its message (printed by
   rank 0, unless it was its own and printed already). rc itself
   elsewhere. */
static int mpi_step(int rc)
{
#ifdef DP_WITH_MPI
    if (cli_mpi.on) {
        dp_error e = cli_mpi.last;
        if (rc && !e.code) { e.code = DP_ERR_ARG; snprintf(e.msg, sizeof e.msg, "failed (exit status %d)", rc); }
        if (dp_mpi_agree(rc ? (int)e.code : 0, &e, &cli_mpi.mo)) {
            if (!rc || e.code == DP_ERR_PEER) fail(&e);
            return rc ? rc : EXIT_FAIL;
        }
    }
#endif
    return rc;
}

static int oom(void)
{
    dp_error e = {DP_ERR_NOMEM, "out of memory"};
    return fail(&e);
}

static int parse_long(const char *cmd, const char *opt, const char *s,
                      long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return usage(cmd, "%s: '%s' is not an integer in [%ld, %ld]", opt, s, lo, hi);
    *out = v;
    return 0;
}

static int parse_double(const char *cmd, const char *opt, const char *s,
                        double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi))
        return usage(cmd, "%s: '%s' is not a number in [%g, %g]", opt, s, lo, hi);
    *out = v;
    return 0;
}

static int parse_seed(const char *cmd, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *s == '-' || *end || errno)
        return usage(cmd, "--seed: '%s' is not a non-negative integer", s);
    *out = (uint64_t)v;
    return 0;
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

/* "a,b,c" (train --devices 2,4,8) into at most max numbers; returns how
   many, -1 on a bad one. */
static int split_numbers(const char *list, double *out, int max, int integer)
{
    char buf[256];
    int n = 0;
    if (strlen(list) >= sizeof buf) return -1;
    strcpy(buf, list);
    if (!buf[0] || buf[strlen(buf) - 1] == ',' || buf[0] == ',' || strstr(buf, ",,")) return -1;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        errno = 0;
        double v = integer ? (double)strtol(tok, &end, 10) : strtod(tok, &end);
        if (*end || errno || n == max || !(v >= 0) || !isfinite(v)) return -1;
        if (integer && v > INT_MAX) return -1;
        out[n++] = v;
    }
    return n;
}

/* The options that only store a flag, a string or a number in range into
   cli; parse_args handles the others (lists, keywords, side effects). */
typedef struct opt_spec {
    const char *name;
    char type;              /* f flag, s string, i integer, d number */
    size_t off;             /* of the field in cli                     */
    double lo, hi;          /* i and d: the accepted range             */
} opt_spec;
#define OPT_FLAG(n, f)         {n, 'f', offsetof(cli, f), 0, 0}
#define OPT_STR(n, f)          {n, 's', offsetof(cli, f), 0, 0}
#define OPT_INT(n, f, lo, hi)  {n, 'i', offsetof(cli, f), lo, hi}
#define OPT_NUM(n, f, lo, hi)  {n, 'd', offsetof(cli, f), lo, hi}
static const opt_spec opt_specs[] = {
    OPT_FLAG("json", json), OPT_FLAG("md", md), OPT_FLAG("no-transfers", no_transfers),
    OPT_FLAG("shared-gnn", shared_gnn), OPT_FLAG("insertion", insertion), OPT_FLAG("no-verify", no_verify), OPT_FLAG("no-link-pacing", no_link_pacing),
    OPT_FLAG("greedy-baseline", greedy_baseline), OPT_FLAG("adv-norm", adv_norm), OPT_FLAG("critic", critic),
    OPT_FLAG("reinforce", reinforce), OPT_FLAG("weights", wl.weights), OPT_FLAG("progress", progress),
    OPT_STR("cluster", cluster), OPT_STR("precision", precision), OPT_STR("machines", machines), OPT_STR("internode", internode), OPT_STR("method", method), OPT_STR("methods", methods),
    OPT_STR("assign", assign), OPT_STR("mpi-devices", mpi_devices), OPT_STR("start", start), OPT_STR("out", out), OPT_STR("gantt", gantt),
    OPT_STR("to", to), OPT_STR("stages", stages), OPT_STR("episodes", episodes), OPT_STR("lr", lr),
    OPT_STR("curve", curve), OPT_STR("curve-svg", curve_svg), OPT_STR("out-assign", out_assign), OPT_STR("init", init),
    OPT_STR("backend", backend), OPT_STR("trace-svg", trace_svg),
    OPT_INT("hidden", hidden, 1, DP_MAX_HIDDEN), OPT_INT("rollouts", rollouts, 1, 4096),
    OPT_INT("ppo", ppo, 1, 64), OPT_NUM("ppo-clip", ppo_clip, 1e-6, 0.999), OPT_NUM("critic-lr", critic_lr, 1e-9, 1e3),
    OPT_NUM("op-logits", op_logits, 1e-9, 1e6), OPT_NUM("op-prior", op_prior, 1e-9, 100),
    OPT_INT("op-restart", op_restart, -1, 1000000),
    OPT_NUM("tau", tau, 1e-9, 1e6),
    OPT_INT("improve", improve, 1, 100000000), OPT_INT("polish", polish, 1, 100), OPT_INT("threads", threads, 1, 1024), OPT_INT("budget", budget, 1, INT_MAX), OPT_NUM("time-limit", time_limit, 1e-6, 1e8),
    OPT_INT("nodes", gen.nodes, 1, DP_MAX_OPS), OPT_INT("width", gen.width, 1, DP_MAX_OPS),
    OPT_INT("jump", gen.jump, 1, DP_MAX_OPS), OPT_INT("parts", wl.parts, 1, 8),
    OPT_INT("dim", wl.dim, 1, 8192), OPT_INT("batch", wl.batch, 1, 8192), OPT_INT("reps", reps, 1, 10000), OPT_NUM("mpi-timeout", mpi_timeout, 1e-3, 1e8),
    OPT_INT("vocab", wl.vocab, 1, 1 << 20),
    OPT_NUM("temperature", temperature, 1e-3, 1e3), OPT_NUM("anchor-rate", anchor_rate, 1e-9, 1e3),
    OPT_NUM("self-imitation", self_imitation, 0, 1e6), OPT_NUM("density", gen.density, 0, 1),
    OPT_NUM("regularity", gen.regularity, 0, 1), OPT_NUM("ccr", gen.ccr, 0, 1e6),
};

static const opt_spec *find_opt(const char *name)
{
    for (size_t k = 0; k < sizeof opt_specs / sizeof opt_specs[0]; k++)
        if (!strcmp(opt_specs[k].name, name)) return &opt_specs[k];
    return NULL;
}

/* --NAME VAL for an option of the table */
static int set_simple(cli *o, const opt_spec *s, const char *val)
{
    char opt[80];
    char *field = (char *)o + s->off;
    long l = 0;
    double d = 0;
    int rc = 0;
    snprintf(opt, sizeof opt, "--%s", s->name);
    switch (s->type) {
    case 's': memcpy(field, &val, sizeof val); break;
    case 'i':
        rc = parse_long(o->cmd, opt, val, (long)s->lo, (long)s->hi, &l);
        *(int *)(void *)field = (int)l;
        break;
    default:
        rc = parse_double(o->cmd, opt, val, s->lo, s->hi, &d);
        *(double *)(void *)field = d;
        break;
    }
    return rc;
}

/* --devices N, or (train) a list such as 2,4,8 */
static int set_devices(cli *o, const char *val)
{
    const char *cmd = o->cmd;
    long l = 0;
    int rc = 0;
    o->devices_set = 1;
    if (!strchr(val, ',')) {
        rc = parse_long(cmd, "--devices", val, 1, DP_MAX_DEVICES, &l);
        o->devices = (int)l;
        return rc;
    }
    double v[8];
    int k, nv = split_numbers(val, v, 8, 1);
    if (strcmp(cmd, "train")) rc = usage(cmd, "--devices: one count (a list is for 'doppler train')");
    else if (nv < 0) rc = usage(cmd, "--devices: '%s' is not a list of at most 8 counts", val);
    for (k = 0; !rc && k < nv; k++)
        if (v[k] < 1 || v[k] > DP_MAX_DEVICES) rc = usage(cmd, "--devices: %g not in 1..%d", v[k], DP_MAX_DEVICES);
    for (k = 0; !rc && k < nv; k++) o->dev_list[k] = (int)v[k];
    o->n_dev_list = nv;
    o->devices = o->dev_list[0];
    return rc;
}

/* --NAME VAL for the options with keywords, lists or side effects */
static int set_special(cli *o, const char *name, const char *val)
{
    const char *cmd = o->cmd;
    long l = 0;
    double d = 0;
    int rc = 0;
    if (!strcmp(name, "devices")) {
        rc = set_devices(o, val);
    } else if (!strcmp(name, "format")) {
        if (dp_format_parse(val, &o->fmt))
            rc = usage(cmd, "--format: unknown format '%s' (native, doppler, stg, binary)", val);
    } else if (!strcmp(name, "seed")) {
        rc = parse_seed(cmd, val, &o->seed);
        o->gen.seed = o->seed;
    } else if (!strcmp(name, "step-baseline")) {
        if (!strcmp(val, "on")) o->step_baseline = 0;
        else if (!strcmp(val, "off")) o->step_baseline = -1;
        else rc = usage(cmd, "--step-baseline: '%s' is neither on nor off", val);
    } else if (!strcmp(name, "dispatch")) {
        if (!strcmp(val, "dynamic")) o->dispatch = DP_DISPATCH_DYNAMIC;
        else if (!strcmp(val, "static")) o->dispatch = DP_DISPATCH_STATIC;
        else if (!strcmp(val, "graph")) o->dispatch = DP_DISPATCH_GRAPH;
        else rc = usage(cmd, "--dispatch: '%s' is none of dynamic, static, graph", val);
    } else if (!strcmp(name, "order")) {
        if (!strcmp(val, "fifo")) o->order = DP_ORDER_FIFO;
        else if (!strcmp(val, "priority")) o->order = DP_ORDER_PRIORITY;
        else rc = usage(cmd, "--order: '%s' is neither fifo nor priority", val);
    } else if (!strcmp(name, "policy")) {
        if (o->policy2) rc = usage(cmd, "--policy: at most two (one doppler, one placeto)");
        else if (o->policy) o->policy2 = val;
        else o->policy = val;
    } else if (!strcmp(name, "algo")) {
        if (strcmp(val, "doppler") && strcmp(val, "placeto"))
            rc = usage(cmd, "--algo: '%s' is neither doppler nor placeto", val);
        o->algo = val;
    } else if (!strcmp(name, "from")) {
        dp_method fm;
        if (dp_method_parse(val, &fm)) rc = usage(cmd, "--from: unknown method '%s'", val);
        o->from = val;
    } else if (!strcmp(name, "layers")) {
        rc = parse_long(cmd, "--layers", val, 0, 64, &l);
        o->layers = (int)l;
        o->wl.layers = (int)l;
        if (!rc && l == 0) rc = usage(cmd, "--layers: 0 is not allowed (at least 1 round)");
    } else if (!strcmp(name, "samples")) {
        rc = parse_long(cmd, "--samples", val, 0, 1000000, &l);
        o->samples = (int)l;
        o->samples_set = 1;
    } else if (!strcmp(name, "anchor")) {
        if (!strcmp(val, "off")) o->anchor = -1;
        else { rc = parse_double(cmd, "--anchor", val, 1e-6, 1e6, &d); o->anchor = d; }
    } else if (!strcmp(name, "select")) {
        if (!strcmp(val, "off")) o->select = -1;
        else { rc = parse_long(cmd, "--select", val, 1, 100000000, &l); o->select = (int)l; }
    } else if (!strcmp(name, "memory")) {
        char *end;
        errno = 0;
        d = strtod(val, &end);
        if (!*val || *end || errno || !(d >= 0) || !isfinite(d))
            rc = usage(cmd, "--memory: '%s' is not a number of bytes >= 0 (0: unlimited)", val);
        o->memory = d;
        o->memory_set = 1;
    } else if (!strcmp(name, "memory-ratio")) {
        /* K or K1,K2,... (one per --devices count), each > 0 */
        const char *p = val;
        o->n_mem_ratio = 0;
        while (!rc) {
            char *end;
            errno = 0;
            d = strtod(p, &end);
            if (end == p || errno || !(d > 0) || !isfinite(d) || o->n_mem_ratio >= 8 || (*end && *end != ','))
                { rc = usage(cmd, "--memory-ratio: '%s' is not a list of at most 8 numbers > 0", val); break; }
            o->mem_ratio[o->n_mem_ratio++] = d;
            if (!*end) break;
            p = end + 1;
        }
    } else if (!strcmp(name, "entropy")) {
        rc = parse_double(cmd, "--entropy", val, 0, 1e6, &d);
        o->entropy = d;
        o->entropy_set = 1;
    }
    return rc;
}

/* Parses argv[first..argc) for command o->cmd, which accepts the options
   named in `allowed`. Returns 0, EXIT_USAGE, or -1 after printing help. */
static int parse_args(cli *o, int argc, char **argv, int first,
                      const char *allowed, const char *help)
{
    const char *cmd = o->cmd;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            return -1;
        }
        if (a[0] != '-' || !strcmp(a, "-")) {
            o->pos[o->n_pos++] = a;
            continue;
        }
        char name[64];
        const char *val = NULL;
        if (!strcmp(a, "-o")) {
            strcpy(name, "out");
        } else if (a[1] == '-' && a[2]) {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            if (n >= sizeof name) return usage(cmd, "unknown option '%s'", a);
            memcpy(name, a + 2, n);
            name[n] = 0;
            if (eq) val = eq + 1;
        } else {
            return usage(cmd, "unknown option '%s'", a);
        }
        if (!has_word(allowed, name))
            return usage(cmd, "unknown option '%s'", a);
        const opt_spec *s = find_opt(name);
        /* one value each (--policy: one per algorithm, set_special counts):
           a second would silently replace the first */
        if (has_word(o->given, name)) {
            if (s && s->type == 'f') continue;   /* a flag twice says the same */
            if (strcmp(name, "policy"))
                return usage(cmd, "--%s%s given twice (it takes one value)", name, strcmp(name, "out") ? "" : " (or -o)");
        } else if (strlen(o->given) + strlen(name) + 2 <= sizeof o->given) {   /* the allowed names fit */
            strcat(o->given, " ");
            strcat(o->given, name);
        }
        if (s && s->type == 'f') {
            if (val) return usage(cmd, "--%s takes no value", name);
            *(int *)(void *)((char *)o + s->off) = 1;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) return usage(cmd, "--%s needs a value", name);
            val = argv[++i];
        }
        int rc = s ? set_simple(o, s, val) : set_special(o, name, val);
        if (rc) return rc;
    }
    if (o->devices_set && o->cluster)
        return usage(cmd, "give --devices or --cluster, not both");
    if (o->json && o->md)
        return usage(cmd, "give --json or --md, not both");
    return 0;
}

/* ----------------------------------------------------------------------
   helpers: graphs, clusters, numbers, JSON
   ---------------------------------------------------------------------- */
static int load_graph(const char *path, dp_format fmt, dp_graph *g)
{
    dp_error e = {0};
    dp_graph_init(g);
    if (dp_graph_read(g, path, fmt, &e)) {
        dp_graph_free(g);
        return fail(&e);
    }
    return 0;
}

/* A --cluster value names a file when one exists by that name or when it
   looks like a path; otherwise a preset ("reference", "homogeneous:N"). */
static int is_preset_name(const char *s)
{
    return access(s, F_OK) != 0 && !strchr(s, '/') && !strchr(s, '.');
}

/* The cluster for graph g (read from path): a refusal by dp_check names
   the graph's file. */
static int make_cluster(const cli *o, const char *path, const dp_graph *g, dp_cluster *c)
{
    dp_error e = {0};
    int rc;
    memset(c, 0, sizeof *c);
    if (o->cluster) {
        rc = is_preset_name(o->cluster) ? dp_cluster_preset_at(c, o->cluster, o->precision, &e)
                                        : dp_cluster_read(c, o->cluster, &e);
    } else {
        int n = o->devices_set ? o->devices
              : g->n_dev_time > 0 ? g->n_dev_time : DEFAULT_DEVICES;
        /* per-device times are for those devices: dp_check refuses more,
           and fewer would silently place on the first columns only */
        if (o->devices_set && g->n_dev_time > 0 && n != g->n_dev_time) {
            snprintf(e.msg, sizeof e.msg, "%.200s: --devices %d was given, but the graph gives per-device times for %d devices "
                     "(its columns): leave --devices out or give --devices %d", path, n, g->n_dev_time, g->n_dev_time);
            e.code = DP_ERR_RANGE;
            return fail(&e);
        }
        rc = dp_cluster_for_graph(c, g, n, &e);
    }
    for (int d = 0; !rc && o->memory_set && d < c->n; d++) c->memory[d] = o->memory;   /* --memory */
    if (!rc && o->machines)   /* --machines K --internode B[,L], checked in main */
        rc = dp_cluster_set_nodes(c, atoi(o->machines), o->internode_bw, o->internode_lat, &e);
    if (!rc && (rc = dp_check(g, c, &e)) != 0) {
        char msg[sizeof e.msg];
        snprintf(msg, sizeof msg, "%s", e.msg);
        snprintf(e.msg, sizeof e.msg, "%.200s%s%.100s%s: %.200s", path, o->cluster ? " on the cluster " : "",
                 o->cluster ? o->cluster : "", o->cluster ? "" : " on its default cluster", msg);
    }
    if (rc) {
        dp_cluster_free(c);
        memset(c, 0, sizeof *c);
        return fail(&e);
    }
    return 0;
}

/* The graph at path and its cluster (--devices or --cluster); after a
   failure (reported) there is nothing to free. */
static int load_input(const cli *o, const char *path, dp_graph *g, dp_cluster *c)
{
    if (load_graph(path, o->fmt, g)) return EXIT_FAIL;
    if (make_cluster(o, path, g, c)) { dp_graph_free(g); return EXIT_FAIL; }
    return 0;
}

static double ratio_of(double makespan, double lb)
{
    if (lb > 0) return makespan / lb;
    return makespan == 0 ? 1.0 : INFINITY;
}

static const char *fmt_ratio(char *buf, size_t n, double r)
{
    if (isfinite(r)) snprintf(buf, n, "%.3f", r);
    else snprintf(buf, n, "n/a");
    return buf;
}

static const char *base_name(const char *path, char *buf, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, n, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = 0;
    return buf;
}

/* s as a JSON string: quotes, backslashes and control characters
   escaped, and a byte that is not part of valid UTF-8 (a file name in
   Latin-1, an op name with bytes FF FE) written as \u00XX, as the
   library's mapping writer does, so that the output is always JSON. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default: {
            int n = dp__utf8_len(p);   /* 0: not UTF-8, written as \u00XX */
            if (*p < 0x20 || n == 0) fprintf(f, "\\u%04x", *p);
            else { fwrite(p, 1, (size_t)n, f); p += n - 1; }
        }
        }
    }
    fputc('"', f);
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else fputs("null", f);
}

static void json_key_str(FILE *f, const char *k, const char *v)
{
    fprintf(f, ", \"%s\": ", k);
    if (v) json_str(f, v); else fputs("null", f);
}

static void json_key_num(FILE *f, const char *k, double v)
{
    fprintf(f, ", \"%s\": ", k);
    json_num(f, v);
}

/* ----------------------------------------------------------------------
   output files: every path a command writes, checked before any work
   ---------------------------------------------------------------------- */
/* A command's files: its outputs ("-": standard output, at most one) and
   its inputs ("-" refused: /dev/stdin reads standard input). Before any
   work outs_check refuses, naming the option, the path and why, an
   output the library cannot write (its directory missing or not
   writable, a directory, a read-only file: exit 1), two outputs naming
   one file or an output that is an input (exit 2, bad usage). The
   outputs are then written to temporaries (out_name) and put in place
   together (outs_commit), so that a failure leaves every existing output
   as it was (dp_outputs). */
#define MAX_OUTS 8
typedef struct named { const char *what, *path; } named;   /* path NULL: not given */
typedef struct outs {
    dp_outputs set;
    const char *path[MAX_OUTS];   /* as given                            */
    int idx[MAX_OUTS];            /* in set, -1 for "-" (standard output) */
    int n;
} outs;

static int outs_check(const cli *o, outs *w, const named *out, int n_out, const named *in, int n_in)
{
    dp_error e = {0};
    const char *dash = NULL;
    int rc;
    memset(w, 0, sizeof *w);
    for (int k = 0; k < n_in; k++)
        if (in[k].path && !strcmp(in[k].path, "-"))
            return usage(o->cmd, "%s: '-' (standard input) is not read: give a file name (/dev/stdin reads standard input)", in[k].what);
    for (int k = 0; k < n_out && w->n < MAX_OUTS; k++) {
        if (!out[k].path) continue;
        w->path[w->n] = out[k].path;
        w->idx[w->n] = -1;
        if (!strcmp(out[k].path, "-")) {
            if (dash) return usage(o->cmd, "%s and %s are both '-': at most one output to standard output", dash, out[k].what);
            dash = out[k].what;
        } else if ((rc = dp_outputs_add(&w->set, out[k].path, &e)) != 0) {
            dp_outputs_free(&w->set);
            if (rc == DP_ERR_ARG) return usage(o->cmd, "%s: %s", out[k].what, e.msg);
            fprintf(stderr, "doppler %s: %s: %s\n", o->cmd, out[k].what, e.msg);
            return EXIT_FAIL;
        } else {
            w->idx[w->n] = w->set.n - 1;
        }
        w->n++;
    }
    for (int k = 0; k < n_in; k++)
        if (in[k].path && dp_outputs_input(&w->set, in[k].path, &e)) {
            dp_outputs_free(&w->set);
            return usage(o->cmd, "%s: %s", in[k].what, e.msg);
        }
    return 0;
}

/* outs_check with the graphs among the inputs: the positional arguments
   o->pos[0 .. n_pos) (each a `what`), then `more`. */
static int outs_check_pos(const cli *o, outs *w, const named *out, int n_out, const char *what, int n_pos,
                          const named *more, int n_more)
{
    named *in = calloc((size_t)(n_pos + n_more) + 1, sizeof *in);
    int rc;
    if (!in) return oom();
    for (int i = 0; i < n_pos; i++) { in[i].what = what; in[i].path = o->pos[i]; }
    for (int i = 0; i < n_more; i++) in[n_pos + i] = more[i];
    rc = outs_check(o, w, out, n_out, in, n_pos + n_more);
    free(in);
    return rc;
}

/* The name to write the output given as path to: its temporary, or
   /dev/stdout for "-" (what the command printed before it comes first);
   NULL after a failure (reported). */
static const char *out_name(outs *w, const char *path)
{
    dp_error e = {0};
    const char *to = NULL;
    for (int k = 0; k < w->n; k++) {
        if (w->path[k] != path) continue;
        if (w->idx[k] < 0) { fflush(stdout); return "/dev/stdout"; }
        if (dp_outputs_stage(&w->set, w->idx[k], &to, &e)) { fail(&e); return NULL; }
        return to;
    }
    fprintf(stderr, "doppler: %s: an output not checked before the work\n", path);
    return NULL;
}

/* Puts every output written in place; frees the set either way (what was
   not put in place is removed). */
static int outs_commit(outs *w)
{
    dp_error e = {0};
    int rc = dp_outputs_commit(&w->set, &e) ? fail(&e) : 0;
    dp_outputs_free(&w->set);
    return rc;
}

static void outs_free(outs *w)
{
    dp_outputs_free(&w->set);
}

/* "B" or "B,L" (two numbers; their ranges are dp_cluster_set_nodes'):
   0, or -1 when it is not that. */
static int parse_internode(const char *s, double *bw, double *lat)
{
    char *end;
    *lat = 0;
    *bw = strtod(s, &end);
    if (end == s) return -1;
    if (*end == ',') {
        const char *l = end + 1;
        *lat = strtod(l, &end);
        if (end == l) return -1;
    }
    return *end ? -1 : 0;
}

/* An assignment file, or, for a name ending in .json, a mapping file
   (the placement by the ops' source names, dp_mapping_write), written to
   the output out of w; a failure is reported. */
static int write_placement(outs *w, const char *out, const dp_graph *g, const int *assign, const char *graph,
                           const char *method, int devices, double makespan)
{
    dp_error e = {0};
    size_t n = strlen(out);
    const char *to = out_name(w, out);
    dp_mapping_info mi;
    if (!to) return EXIT_FAIL;
    if (n < 5 || strcmp(out + n - 5, ".json") != 0) return dp_assign_write(to, assign, g->n_ops, &e) ? fail(&e) : 0;
    memset(&mi, 0, sizeof mi);
    mi.graph = graph; mi.method = method; mi.devices = devices; mi.makespan = makespan;
    return dp_mapping_write(to, g, assign, &mi, &e) ? fail(&e) : 0;
}

/* An assignment file, or a mapping file (a name ending in .json). */
static int read_placement(const char *in, const dp_graph *g, int devices, int *assign, dp_error *e)
{
    size_t n = strlen(in);
    if (n >= 5 && strcmp(in + n - 5, ".json") == 0) return dp_mapping_read(in, g, devices, assign, e);
    return dp_assign_read(in, g->n_ops, devices, assign, e);
}

static void json_assignment(FILE *f, const int *assign, int n)
{
    fputs(", \"assignment\": [", f);
    for (int i = 0; i < n; i++) fprintf(f, i ? ", %d" : "%d", assign[i]);
    fputc(']', f);
}

static const char *order_name(dp_order o)
{
    return o == DP_ORDER_PRIORITY ? "priority" : "fifo";
}

/* Runs the simulator once on `assign`, tracking memory, and keeps the
   dp_sim for the caller (per-device table, ops, Gantt chart with each
   device's peak). A placement whose peak passes a device's memory is
   refused with the library's message (the device, its peak and limit). */
static int simulate(const dp_graph *g, const dp_cluster *c, const int *assign,
                    dp_order order, const double *priority, dp_sim *s)
{
    dp_error e = {0};
    dp_sim_opts so = {0};
    so.order = order;
    so.priority = priority;
    so.track_memory = 1;
    memset(s, 0, sizeof *s);
    if (dp_sim_init(s, g, c, &e) || dp_sim_run(s, assign, &so, &e) || dp_sim_check_memory(s, &e)) {
        dp_sim_free(s);
        memset(s, 0, sizeof *s);
        return fail(&e);
    }
    return 0;
}

/* The learned placers ("doppler", "placeto") next to the library's
   dp_method values. */
#define METHOD_DOPPLER (-1)
#define METHOD_PLACETO (-2)
#define LEARNED(m) ((m) < 0)

static const char *method_name(int m)
{
    return m == METHOD_DOPPLER ? "doppler" : m == METHOD_PLACETO ? "placeto" : dp_method_name((dp_method)m);
}

/* A result's fallback for JSON: "single" (1), "pipeline" (2), or NULL. */
static const char *fallback_name(int fallback)
{
    return fallback == 2 ? "pipeline" : fallback ? "single" : NULL;
}

/* What stopped a search before its end (dp_place_result.time_limited),
   as the JSON's stopped_by says it: NULL when nothing did */
static const char *stopped_by_name(int time_limited)
{
    return time_limited == DP_TIME_LIMITED ? "time-limit" : time_limited == DP_TIME_BOUNDED ? "time-bound" : NULL;
}

/* time_limited and stopped_by, in JSON where a limit was given or a
   default bound reached */
static void json_time_limited(const cli *o, const dp_place_result *res)
{
    if (!o->time_limit && !res->time_limited) return;
    printf(", \"time_limited\": %s", res->time_limited ? "true" : "false");
    json_key_str(stdout, "stopped_by", stopped_by_name(res->time_limited));
}

static int parse_method(const char *name, int *m)
{
    dp_method dm;
    if (!strcmp(name, "doppler")) { *m = METHOD_DOPPLER; return 0; }
    if (!strcmp(name, "placeto")) { *m = METHOD_PLACETO; return 0; }
    if (dp_method_parse(name, &dm)) return -1;
    *m = (int)dm;
    return 0;
}

/* The policies given with --policy (at most two), loaded. */
typedef struct policies { dp_policy p[2]; const char *path[2]; int n, pretrained; } policies;

/* The pretrained DOPPLER policy (policies/doppler_family.dpl, remade by
   policies/make_family.sh), compiled into the CLI by build.sh as the
   bytes of the file; method doppler uses it when no --policy is given. */
#define PRETRAINED_NAME "policies/doppler_family.dpl, pretrained"
#define PRETRAINED_SAMPLES 64   /* its default --samples */
#ifdef DP_PRETRAINED_POLICY
#include DP_PRETRAINED_POLICY   /* static const unsigned char dp_pretrained_policy[] */
#endif

static int load_pretrained(dp_policy *p)
{
#ifdef DP_PRETRAINED_POLICY
    dp_error e = {0};
    if (dp_policy_load_mem(p, dp_pretrained_policy, sizeof dp_pretrained_policy, PRETRAINED_NAME, &e)) return fail(&e);
    return 0;
#else
    (void)p;
    fprintf(stderr, "doppler: this build has no pretrained policy (./build.sh compiles "
            "policies/doppler_family.dpl in): give --policy POLICY.dpl\n");
    return EXIT_FAIL;
#endif
}

static void policies_free(policies *ps)
{
    for (int i = 0; i < ps->n; i++) dp_policy_free(&ps->p[i]);
    ps->n = 0;
}

/* need_doppler: with no --policy at all, the pretrained policy */
static int policies_load(const cli *o, policies *ps, int need_doppler)
{
    const char *paths[2] = {o->policy, o->policy2};
    memset(ps, 0, sizeof *ps);
    for (int i = 0; i < 2 && paths[i]; i++) {
        dp_error e = {0};
        if (dp_policy_load(&ps->p[ps->n], paths[i], &e)) { policies_free(ps); return fail(&e); }
        ps->path[ps->n++] = paths[i];
    }
    if (ps->n == 2 && ps->p[0].algo == ps->p[1].algo) {
        fprintf(stderr, "doppler: %s and %s are both %s policies; give one of each\n", ps->path[0],
                ps->path[1], ps->p[0].algo == DP_ALGO_PLACETO ? "placeto" : "doppler");
        policies_free(ps);
        return EXIT_FAIL;
    }
    if (need_doppler && ps->n == 0) {
        if (load_pretrained(&ps->p[ps->n])) { policies_free(ps); return EXIT_FAIL; }
        ps->path[ps->n++] = PRETRAINED_NAME;
        ps->pretrained = 1;
    }
    return 0;
}

/* The loaded policy that learned method m needs, or NULL with a message
   saying what the given files are. */
static const dp_policy *policy_for(const policies *ps, int m, const char **path)
{
    dp_algo want = m == METHOD_PLACETO ? DP_ALGO_PLACETO : DP_ALGO_DOPPLER;
    for (int i = 0; i < ps->n; i++)
        if (ps->p[i].algo == want) { *path = ps->path[i]; return &ps->p[i]; }
    if (ps->n == 0)
        fprintf(stderr, "doppler: method %s needs --policy POLICY.dpl\n", method_name(m));
    else
        fprintf(stderr, "doppler: method %s needs a %s policy, but %s is a %s policy "
                "(train one with 'doppler train --algo %s')\n", method_name(m), method_name(m),
                ps->path[0], ps->p[0].algo == DP_ALGO_PLACETO ? "placeto" : "doppler", method_name(m));
    return NULL;
}

/* --progress (or stderr a terminal): a search's progress on stderr about
   once a second: what, how far, the best makespan so far, the seconds run
   and, under a time limit (or anneal's or enumopt's default time bound), the seconds
   left. On a terminal one line is redrawn, else a line each time. */
typedef struct progress_ctx {
    const char *method;
    double t0, limit;   /* limit: seconds (0: none) */
    int tty, shown;
} progress_ctx;

static void progress_line(progress_ctx *p, long done, long total, const char *what, double best)
{
    char of[64] = "", left[48] = "", bb[32] = "none yet";
    double secs = dp_now() - p->t0;
    if (total > 0) snprintf(of, sizeof of, " of %ld (%.0f%%)", total, 100.0 * (double)done / (double)total);
    if (p->limit > 0) snprintf(left, sizeof left, ", %.0f s left", p->limit > secs ? p->limit - secs : 0.0);
    if (best < HUGE_VAL) snprintf(bb, sizeof bb, "%g", best);
    fprintf(stderr, "%s%s: %ld%s %s, best makespan %s, %.0f s%s%s", p->tty ? "\r" : "", p->method, done, of, what, bb,
            secs, left, p->tty ? "\033[K" : "\n");
    fflush(stderr);
    p->shown = 1;
}

/* anneal's and enumopt's (dp_place_opts.progress) */
static void show_progress(void *ctx, long sims, long total, double best)
{
    progress_ctx *p = (progress_ctx *)ctx;
    progress_line(p, sims, total, "simulations", best);
}

/* the learned placers' samples, polish and episodes (dp_infer_opts.progress) */
static void show_step_progress(void *ctx, const char *step, long done, long total, double best)
{
    progress_ctx *p = (progress_ctx *)ctx;
    progress_line(p, done, total, !strcmp(step, "polish") ? "polish simulations" : step, best);
}

/* The progress line done with: cleared on a terminal */
static void progress_end(const progress_ctx *p)
{
    if (p->shown && p->tty) fputs("\r\033[K", stderr);
}

/* Places g with a learned policy: greedy, or the best of greedy and
   o->samples samples; with --improve E first E REINFORCE episodes on g
   with a copy of p (DOPPLER's deployment stage); within --time-limit.
   order gets SEL's op order (placeto: its visit order); res the makespan,
   simulations, fallback (1 when the best single device replaced the
   policy's answer) and time_limited. Returns the library's code (e
   filled). */
static int place_learned(const cli *o, const dp_policy *p, const dp_graph *g, const dp_cluster *c, progress_ctx *pc,
                         int *assign, int *order, dp_place_result *res, dp_error *e)
{
    int rc;
    if (o->improve) {
        dp_improve_opts im = {0};
        im.episodes = o->improve;
        im.samples = o->samples;
        im.threads = o->threads;
        im.seed = o->seed;
        im.order = o->order;
        im.start = o->from;
        im.polish = o->polish;
        im.op_logits = o->op_logits;
        im.op_prior = o->op_prior;
        im.op_restart = o->op_restart;
        im.simulations = &res->simulations;
        im.fallback = &res->fallback;
        im.time_limit = o->time_limit;
        im.time_limited = &res->time_limited;
        if (pc) { im.progress = show_step_progress; im.progress_ctx = pc; }
        rc = dp_policy_improve(p, g, c, &im, assign, order, &res->makespan, e);
    } else {
        dp_infer_opts io = {0};
        io.samples = o->samples;
        io.threads = o->threads;
        io.seed = o->seed;
        io.order = o->order;
        io.start = o->from;
        io.polish = o->polish;
        io.simulations = &res->simulations;
        io.fallback = &res->fallback;
        io.time_limit = o->time_limit;
        io.time_limited = &res->time_limited;
        if (pc) { io.progress = show_step_progress; io.progress_ctx = pc; }
        rc = dp_policy_place(p, g, c, &io, assign, order, &res->makespan, e);
    }
    res->schedule_length = res->makespan;
    return rc;
}

/* The Gantt chart, written to the output path of w. */
static int write_gantt(outs *w, const char *path, const dp_sim *s, const int *assign,
                       const char *title, int no_transfers)
{
    dp_error e = {0};
    dp_gantt_opts go = {0};
    const char *to = out_name(w, path);
    go.title = title;
    go.hide_transfers = no_transfers;
    if (!to) return EXIT_FAIL;
    return dp_gantt_svg(to, s, assign, &go, &e) ? fail(&e) : 0;
}

static void print_devices(const dp_sim *s, const int *assign)
{
    const dp_graph *g = s->g;
    const dp_cluster *c = s->c;
    printf("\n%-6s  %-12s  %6s  %14s  %6s  %14s\n",
           "device", "name", "ops", "busy", "util", "peak bytes");
    for (int d = 0; d < c->n; d++) {
        int n = 0;
        for (int v = 0; v < g->n_ops; v++) n += assign[v] == d;
        /* busy / makespan first: 100 * busy overflows when busy is near
           the largest double */
        double util = s->makespan > 0 ? 100.0 * (s->busy[d] / s->makespan) : 0;
        printf("%-6d  %-12.12s  %6d  %14.6g  %5.1f%%  %14.6g\n", d,
               c->name ? c->name[d] : "", n, s->busy[d], util,
               s->peak_bytes ? s->peak_bytes[d] : 0.0);
    }
}

static int cluster_label(const cli *o, const dp_cluster *c, char *buf, size_t n)
{
    if (o->cluster && is_preset_name(o->cluster) && strchr(o->cluster, '-'))   /* a GPU preset */
        snprintf(buf, n, "%d (%s, %s: %.4g TFLOP/s matmul, %.4g GB/s links)", c->n, o->cluster,
                 o->precision ? o->precision : "fp32", c->speed[0] / 1e12, c->n > 1 ? c->bandwidth[1] / 1e9 : c->bandwidth[0] / 1e9);
    else if (o->cluster) snprintf(buf, n, "%d (%s)", c->n, o->cluster);
    else snprintf(buf, n, "%d", c->n);
    return 0;
}

/* ----------------------------------------------------------------------
   doppler info
   ---------------------------------------------------------------------- */
/* The resident memory of g: *total every op's own resident bytes plus
   each weight that an op uses once (all of it on one device), *largest
   the most one op holds (its own and its weights'), *op that op (-1:
   none holds any). */
static void resident_totals(const dp_graph *g, double *total, double *largest, int *op)
{
    *total = *largest = 0;
    *op = -1;
    for (int v = 0; v < g->n_ops; v++) {
        double r = g->resident[v];
        *total += r;
        if (g->wuse_off)
            for (int k = g->wuse_off[v]; k < g->wuse_off[v + 1]; k++) r += g->weight_bytes[g->wuse[k]];
        if (r > *largest) { *largest = r; *op = v; }
    }
    for (int w = 0; w < g->n_weights; w++)
        if (g->wop_off && g->wop_off[w + 1] > g->wop_off[w]) *total += g->weight_bytes[w];
}

static int cmd_info(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_stats st;
    outs w;   /* no outputs: refuses '-' as an input */
    const named inputs[] = {{"GRAPH", path}, {"--cluster", o->cluster}};
    int rc0 = outs_check(o, &w, NULL, 0, inputs, 2);
    if (rc0) return rc0;
    if (load_input(o, path, &g, &c)) return EXIT_FAIL;
    memset(&st, 0, sizeof st);
    if (dp_graph_stats(&g, &c, &st)) {
        dp_error e = {DP_ERR_ARG, "dp_graph_stats failed"};
        dp_cluster_free(&c);
        dp_graph_free(&g);
        return fail(&e);
    }
    double res_total, res_max;
    int res_op;
    resident_totals(&g, &res_total, &res_max, &res_op);
    if (o->json) {
        printf("{\"graph\": ");
        json_str(stdout, path);
        json_key_str(stdout, "format", dp_format_name(g.format));
        printf(", \"devices\": %d, \"nodes\": %d, \"edges\": %d, \"sources\": %d, "
               "\"sinks\": %d, \"depth\": %d",
               c.n, st.nodes, st.edges, st.sources, st.sinks, st.depth);
        json_key_num(stdout, "total_compute", st.total_compute);
        json_key_num(stdout, "total_bytes", st.total_bytes);
        json_key_num(stdout, "cp_length", st.cp_length);
        json_key_num(stdout, "work_bound", st.work_bound);
        json_key_num(stdout, "lower_bound", st.lower_bound);
        printf(", \"weights\": %d", g.n_weights);
        json_key_num(stdout, "resident_bytes", res_total);
        json_key_num(stdout, "max_op_resident", res_max);
        json_key_str(stdout, "max_op_resident_op", res_op >= 0 ? g.name[res_op] : NULL);
        fputs(", \"memory\": [", stdout);
        for (int d = 0; d < c.n; d++) {
            if (d) fputs(", ", stdout);
            json_num(stdout, c.memory[d]);
        }
        printf("]}\n");
    } else {
        char dev[160];
        cluster_label(o, &c, dev, sizeof dev);
        printf("%-14s %s\n", "graph", path);
        printf("%-14s %s\n", "format", dp_format_name(g.format));
        printf("%-14s %d\n", "nodes", st.nodes);
        printf("%-14s %d\n", "edges", st.edges);
        printf("%-14s %d\n", "sources", st.sources);
        printf("%-14s %d\n", "sinks", st.sinks);
        printf("%-14s %d\n", "depth", st.depth);
        printf("%-14s %.6g\n", "total compute", st.total_compute);
        printf("%-14s %.6g\n", "total bytes", st.total_bytes);
        printf("%-14s %.6g\n", "cp length", st.cp_length);
        printf("%-14s %s\n", "devices", dev);
        printf("%-14s %.6g\n", "work bound", st.work_bound);
        printf("%-14s %.6g\n", "lower bound", st.lower_bound);
        printf("%-14s %d\n", "weights", g.n_weights);
        printf("%-14s %.6g bytes (every op's own, each weight once)\n", "resident", res_total);
        if (res_op >= 0)
            printf("%-14s %.6g bytes (op '%s': its own and its weights')\n", "largest op", res_max, g.name[res_op]);
        else
            printf("%-14s 0 bytes\n", "largest op");
        double lo = INFINITY, hi = 0;
        for (int d = 0; d < c.n; d++) {
            if (c.memory[d] < lo) lo = c.memory[d];
            if (c.memory[d] > hi) hi = c.memory[d];
        }
        if (hi == 0) printf("%-14s unlimited\n", "memory");
        else if (lo == hi) printf("%-14s %.6g bytes per device\n", "memory", hi);
        else printf("%-14s %.6g to %.6g bytes per device (0: unlimited)\n", "memory", lo, hi);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return EXIT_OK;
}

/* Places g with method m (learned ones with policy p), timed into *secs;
   res gets the makespan, the schedule length, the simulations made,
   whether the best single device replaced the method's answer (fallback)
   and whether a clock stopped the search (time_limited). With --progress
   or stderr a terminal, the searches report on stderr.
   Returns 0 or the library's code (DP_ERR_INFEASIBLE: nothing fits the
   devices' memory); a failure is reported, naming path and the method
   when path is given, and e (may be NULL) gets it. */
static int run_method(const cli *o, int m, const dp_policy *p, const dp_graph *g, const dp_cluster *c,
                      const int *start, int *assign, int *order, dp_place_result *res, double *secs,
                      const char *path, dp_error *err)
{
    dp_error e = {0};
    dp_place_opts po = {0};
    progress_ctx pc = {method_name(m), dp_now(), o->time_limit, isatty(2), 0};
    int rc, report = (o->progress || pc.tty) && (m == DP_METHOD_ANNEAL || m == DP_METHOD_ENUMOPT || LEARNED(m));
    po.seed = o->seed;
    po.order = o->order;
    po.budget = o->budget;
    po.time_limit = o->time_limit;
    po.start = start;
    if (((m == DP_METHOD_ANNEAL && !o->budget) || m == DP_METHOD_ENUMOPT) && !o->time_limit) pc.limit = DP_ANNEAL_TIME_BOUND;   /* its default bound */
    if (report && !LEARNED(m)) {
        po.progress = show_progress;
        po.progress_ctx = &pc;
    }
    memset(res, 0, sizeof *res);
    double t0 = dp_now();
    if (LEARNED(m))
        rc = place_learned(o, p, g, c, report ? &pc : NULL, assign, order, res, &e);
    else
        rc = dp_place((dp_method)m, g, c, &po, assign, res, &e);
    progress_end(&pc);
    *secs = dp_now() - t0;
    if (rc) {
        if (!e.code) e.code = (dp_code)rc;
        if (err) *err = e;
        if (!path) fail(&e);
        else fprintf(stderr, "doppler: %s with %s: %s\n", path, method_name(m), e.msg[0] ? e.msg : dp_code_text(e.code));
    }
    return rc;
}

/* The JSON fields of a placement that place and bench print after their
   own: order, makespan, lower bound, ratio, schedule length, simulations,
   seconds and the assignment. */
static void json_result(const cli *o, const dp_place_result *res, double lb, double secs,
                        const int *assign, int n)
{
    json_key_str(stdout, "order", order_name(o->order));
    json_key_num(stdout, "makespan", res->makespan);
    json_key_num(stdout, "lower_bound", lb);
    json_key_num(stdout, "ratio", ratio_of(res->makespan, lb));
    json_key_num(stdout, "schedule_length", res->schedule_length);
    printf(", \"simulations\": %ld", res->simulations);
    if (res->bounded) printf(", \"moves_bounded\": %ld", res->bounded);   /* anneal, enumopt: moves decided without a simulation */
    json_key_num(stdout, "seconds", secs);
    json_assignment(stdout, assign, n);
}

/* ----------------------------------------------------------------------
   doppler place
   ---------------------------------------------------------------------- */
/* What place found, for printing. */
typedef struct placed {
    const char *path, *pol_path;
    int m;
    const dp_policy *pol;
    const dp_graph *g;
    const dp_cluster *c;
    const int *assign, *order;
    dp_place_result res;
    double lb, secs;
    const dp_sim *s;
} placed;

static int place_check_args(const cli *o, int *m)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    if (!o->method) return usage(o->cmd, "--method is required");
    if (parse_method(o->method, m))
        return usage(o->cmd, "--method: unknown method '%s'", o->method);
    if (*m == METHOD_PLACETO && !o->policy)
        return usage(o->cmd, "--method placeto needs --policy POLICY.dpl");
    if (!LEARNED(*m) && (o->policy || o->samples_set))
        return usage(o->cmd, "--policy and --samples are for --method doppler or placeto");
    if (LEARNED(*m) && (o->start || o->budget))
        return usage(o->cmd, "--start and --budget are not for --method %s", method_name(*m));
    if (o->improve && *m != METHOD_DOPPLER)
        return usage(o->cmd, "--improve is for --method doppler");
    if ((o->op_logits || o->op_prior || o->op_restart) && !o->improve)
        return usage(o->cmd, "--op-logits, --op-prior and --op-restart are for --improve E");
    if ((o->op_prior || o->op_restart) && !o->op_logits)
        return usage(o->cmd, "--op-prior and --op-restart are for --op-logits");
    if (o->polish && !LEARNED(*m))
        return usage(o->cmd, "--polish is for --method doppler or placeto (a heuristic's answer: --method enumopt --start A)");
    if (o->from && *m != METHOD_PLACETO)
        return usage(o->cmd, "--from is for --method placeto");
    return 0;
}

static void place_print_json(const cli *o, const placed *p)
{
    printf("{\"graph\": ");
    json_str(stdout, p->path);
    json_key_str(stdout, "method", method_name(p->m));
    if (LEARNED(p->m)) {
        json_key_str(stdout, "policy", p->pol_path);
        printf(", \"samples\": %d", o->samples);
        if (o->improve) printf(", \"improve\": %d", o->improve);
        if (o->polish) printf(", \"polish\": %d", o->polish);
        if (p->m == METHOD_PLACETO) json_key_str(stdout, "from", o->from ? o->from : "cp");
    }
    printf(", \"devices\": %d", p->c->n);
    json_key_str(stdout, "fallback", fallback_name(p->res.fallback));
    json_time_limited(o, &p->res);
    json_result(o, &p->res, p->lb, p->secs, p->assign, p->g->n_ops);
    if (p->order) {
        fputs(p->m == METHOD_PLACETO ? ", \"visit_order\": [" : ", \"sel_order\": [", stdout);
        for (int i = 0; i < p->g->n_ops; i++) printf(i ? ", %d" : "%d", p->order[i]);
        fputc(']', stdout);
    }
    printf("}\n");
}

static void place_print_text(const cli *o, const placed *p)
{
    char rb[32], dev[160];
    const dp_policy *pol = p->pol;
    cluster_label(o, p->c, dev, sizeof dev);
    printf("%-16s %s\n", "graph", p->path);
    printf("%-16s %s\n", "method", method_name(p->m));
    if (LEARNED(p->m))
        printf("%-16s %s (hidden %d, %d layers%s%s)%s\n", "policy", p->pol_path,
               pol->opts.hidden, pol->opts.layers, pol->opts.shared_gnn ? ", shared GNN" : "",
               pol->opts.insertion ? ", insertion" : "", o->samples ? "" : ", greedy");
    if (LEARNED(p->m) && pol->op_table)
        printf("%-16s %d ops x %d devices (used on the graph and cluster they were learnt on)\n", "per-op logits",
               pol->op_n, pol->op_devices);
    if (p->m == METHOD_PLACETO)
        printf("%-16s %s\n", "starts from", o->from ? o->from : "cp");
    if (LEARNED(p->m) && o->samples)
        printf("%-16s %d (best of greedy and these)\n", "samples", o->samples);
    if (o->improve)
        printf("%-16s %d REINFORCE episodes on this graph first (best placement any reached kept)\n", "improve", o->improve);
    if (o->polish)
        printf("%-16s at most %d passes of local search (enumopt's moves) from the policy's answer\n", "polish", o->polish);
    printf("%-16s %s\n", "devices", dev);
    printf("%-16s %.6g  (%s x lower bound)\n", "makespan", p->res.makespan,
           fmt_ratio(rb, sizeof rb, ratio_of(p->res.makespan, p->lb)));
    printf("%-16s %.6g\n", "lower bound", p->lb);
    if (p->res.schedule_length != p->res.makespan)
        printf("%-16s %.6g  (%s x lower bound; the placer's own schedule)\n",
               "schedule length", p->res.schedule_length,
               fmt_ratio(rb, sizeof rb, ratio_of(p->res.schedule_length, p->lb)));
    if (p->res.fallback == 2)
        printf("%-16s pipeline: every placement of %s met a memory dead end; pipeline's fits\n", "fallback", method_name(p->m));
    else if (p->res.fallback)
        printf("%-16s single device %d: better than %s's own answer (or %s found none within memory)\n",
               "fallback", p->g->n_ops > 0 ? p->assign[0] : 0, method_name(p->m), method_name(p->m));
    printf("%-16s %ld\n", "simulations", p->res.simulations);
    if (p->res.bounded)
        printf("%-16s %ld more moves decided by their lower bound, not simulated\n", "moves bounded", p->res.bounded);
    if (p->res.time_limited == DP_TIME_LIMITED)
        printf("%-16s stopped by --time-limit %g s: the best placement found so far\n", "time limit", o->time_limit);
    else if (p->res.time_limited == DP_TIME_BOUNDED)
        printf("%-16s stopped by %s's default time bound, %g s (no %s given): the best placement found so far\n",
               "time limit", method_name(p->m), DP_ANNEAL_TIME_BOUND, p->m == DP_METHOD_ANNEAL ? "--budget or --time-limit" : "--time-limit");
    printf("%-16s %.4g\n", "seconds", p->secs);
    if (o->out) printf("%-16s %s\n", "assignment", o->out);
    if (o->gantt) printf("%-16s %s\n", "gantt", o->gantt);
    print_devices(p->s, p->assign);
}

static int cmd_place(cli *o)
{
    int m = 0, rc;
    if ((rc = place_check_args(o, &m))) return rc;
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_error e = {0};
    policies ps;
    placed p;
    int *assign = NULL, *start = NULL, *order = NULL;
    double *prio = NULL;
    dp_sim s;
    outs w;
    const named outputs[] = {{"--out", o->out}, {"--gantt", o->gantt}};
    const named inputs[] = {{"GRAPH", path}, {"--cluster", o->cluster}, {"--start", o->start},
                            {"--policy", o->policy}, {"--policy", o->policy2}};
    if ((rc = outs_check(o, &w, outputs, 2, inputs, 5))) return rc;
    memset(&s, 0, sizeof s);
    memset(&ps, 0, sizeof ps);
    memset(&p, 0, sizeof p);
    if (load_input(o, path, &g, &c)) { outs_free(&w); return EXIT_FAIL; }
    rc = EXIT_FAIL;
    if (LEARNED(m) && (policies_load(o, &ps, m == METHOD_DOPPLER) || !(p.pol = policy_for(&ps, m, &p.pol_path)))) goto done;
    if (ps.pretrained && !o->samples_set) o->samples = PRETRAINED_SAMPLES;

    assign = calloc((size_t)g.n_ops + 1, sizeof *assign);
    start = o->start ? calloc((size_t)g.n_ops + 1, sizeof *start) : NULL;
    if (LEARNED(m)) {
        order = calloc((size_t)g.n_ops + 1, sizeof *order);
        prio = calloc((size_t)g.n_ops + 1, sizeof *prio);
    }
    if (!assign || (o->start && !start) || (LEARNED(m) && (!order || !prio))) { oom(); goto done; }
    if (start && read_placement(o->start, &g, c.n, start, &e)) { fail(&e); goto done; }
    if (run_method(o, m, p.pol, &g, &c, start, assign, order, &p.res, &p.secs, NULL, NULL)) goto done;
    if (LEARNED(m) && o->order == DP_ORDER_PRIORITY) dp_order_to_priority(order, g.n_ops, prio);
    if (simulate(&g, &c, assign, o->order, o->order == DP_ORDER_PRIORITY ? prio : NULL, &s)) goto done;
    if (s.makespan != p.res.makespan)
        fprintf(stderr, "doppler: warning: placer reports makespan %.17g, "
                "the simulator gives %.17g\n", p.res.makespan, s.makespan);
    if (o->out && write_placement(&w, o->out, &g, assign, path, method_name(m), c.n, s.makespan)) goto done;
    if (o->gantt) {
        /* the chart's own subtitle gives makespan, lower bound and ratio */
        char title[512], gb[256];
        snprintf(title, sizeof title, "%s: %s on %d devices (%s order)",
                 base_name(path, gb, sizeof gb), method_name(m), c.n, order_name(o->order));
        if (write_gantt(&w, o->gantt, &s, assign, title, o->no_transfers)) goto done;
    }
    if (outs_commit(&w)) goto done;
    p.path = path;
    p.m = m;
    p.g = &g;
    p.c = &c;
    p.assign = assign;
    p.order = order;
    p.lb = dp_lower_bound(&g, &c);
    p.s = &s;
    if (o->json) place_print_json(o, &p);
    else place_print_text(o, &p);
    rc = EXIT_OK;
done:
    outs_free(&w);
    dp_sim_free(&s);
    policies_free(&ps);
    free(prio);
    free(order);
    free(start);
    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler sim
   ---------------------------------------------------------------------- */
/* sim --json: the run, every op and every transfer */
static void sim_print_json(const cli *o, const char *path, const dp_graph *g, const dp_cluster *c,
                           const dp_sim *s, const int *assign, double lb, double secs)
{
    double ratio = ratio_of(s->makespan, lb);
    printf("{\"graph\": ");
    json_str(stdout, path);
    json_key_str(stdout, "method", "given");
    json_key_str(stdout, "assign_file", o->assign);
    printf(", \"devices\": %d", c->n);
    json_key_str(stdout, "order", order_name(o->order));
    json_key_num(stdout, "makespan", s->makespan);
    json_key_num(stdout, "lower_bound", lb);
    json_key_num(stdout, "ratio", ratio);
    json_key_num(stdout, "seconds", secs);
    json_assignment(stdout, assign, g->n_ops);
    fputs(",\n \"busy\": [", stdout);
    for (int d = 0; d < c->n; d++) {
        if (d) fputs(", ", stdout);
        json_num(stdout, s->busy[d]);
    }
    fputs("],\n \"peak_bytes\": [", stdout);
    for (int d = 0; d < c->n; d++) {
        if (d) fputs(", ", stdout);
        json_num(stdout, s->peak_bytes ? s->peak_bytes[d] : 0.0);
    }
    fputs("],\n \"ops\": [", stdout);
    for (int v = 0; v < g->n_ops; v++) {
        printf("%s\n  {\"node\": %d, \"device\": %d, \"start\": ", v ? "," : "", v, assign[v]);
        json_num(stdout, s->start[v]);
        fputs(", \"end\": ", stdout);
        json_num(stdout, s->end[v]);
        fputc('}', stdout);
    }
    fputs("],\n \"transfers\": [", stdout);
    for (int i = 0; i < s->n_xfers; i++) {
        const dp_xfer *x = &s->xfers[i];
        printf("%s\n  {\"edge\": %d, \"from\": %d, \"to\": %d, \"start\": ",
               i ? "," : "", x->edge, x->from, x->to);
        json_num(stdout, x->start);
        fputs(", \"end\": ", stdout);
        json_num(stdout, x->end);
        fputc('}', stdout);
    }
    fputs("]}\n", stdout);
}

static int cmd_sim(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    if (!o->assign) return usage(o->cmd, "--assign is required");
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_error e = {0};
    dp_sim s;
    int rc = EXIT_FAIL, *assign = NULL;
    outs w;
    const named outputs[] = {{"--gantt", o->gantt}};
    const named inputs[] = {{"GRAPH", path}, {"--assign", o->assign}, {"--cluster", o->cluster}};
    if ((rc = outs_check(o, &w, outputs, 1, inputs, 3))) return rc;
    rc = EXIT_FAIL;
    memset(&s, 0, sizeof s);
    if (load_input(o, path, &g, &c)) { outs_free(&w); return EXIT_FAIL; }
    assign = calloc((size_t)g.n_ops + 1, sizeof *assign);
    if (!assign) { oom(); goto done; }
    if (read_placement(o->assign, &g, c.n, assign, &e)) { fail(&e); goto done; }
    double t0 = dp_now();
    if (simulate(&g, &c, assign, o->order, NULL, &s)) goto done;
    double secs = dp_now() - t0;
    double lb = dp_lower_bound(&g, &c);
    double ratio = ratio_of(s.makespan, lb);
    if (o->gantt) {
        char title[512], gb[256];
        snprintf(title, sizeof title, "%s: assignment %s on %d devices (%s order)",
                 base_name(path, gb, sizeof gb), o->assign, c.n, order_name(o->order));
        if (write_gantt(&w, o->gantt, &s, assign, title, o->no_transfers) || outs_commit(&w)) goto done;
    }
    if (o->json) {
        sim_print_json(o, path, &g, &c, &s, assign, lb, secs);
    } else {
        char rb[32], dev[160];
        cluster_label(o, &c, dev, sizeof dev);
        printf("%-12s %s\n", "graph", path);
        printf("%-12s %s\n", "assignment", o->assign);
        printf("%-12s %s\n", "devices", dev);
        printf("%-12s %s\n", "order", order_name(o->order));
        printf("%-12s %.6g  (%s x lower bound)\n", "makespan", s.makespan,
               fmt_ratio(rb, sizeof rb, ratio));
        printf("%-12s %.6g\n", "lower bound", lb);
        printf("%-12s %d\n", "transfers", s.n_xfers);
        if (o->gantt) printf("%-12s %s\n", "gantt", o->gantt);
        print_devices(&s, assign);
    }
    rc = EXIT_OK;
done:
    outs_free(&w);
    dp_sim_free(&s);
    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler bench
   ---------------------------------------------------------------------- */
static int parse_methods(const cli *o, int *ms, int *n)
{
    *n = 0;
    const char *list = o->methods ? o->methods : "all";
    if (!strcmp(list, "all")) {
        for (int m = 0; m < DP_METHOD__COUNT; m++) ms[(*n)++] = m;
        return 0;   /* cmd_bench adds the learned placers of the given policies */
    }
    char buf[512];
    if (strlen(list) >= sizeof buf) return usage(o->cmd, "--methods: list too long");
    strcpy(buf, list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int mi;
        if (parse_method(tok, &mi)) return usage(o->cmd, "--methods: unknown method '%s'", tok);
        if (mi == METHOD_PLACETO && !o->policy)
            return usage(o->cmd, "--methods: placeto needs --policy POLICY.dpl");
        if (*n == 64) return usage(o->cmd, "--methods: too many methods");
        ms[(*n)++] = mi;
    }
    if (*n == 0) return usage(o->cmd, "--methods: no method given");
    return 0;
}

/* The methods to compare and the policies they need: ms gets the list
   (--methods, or all: every heuristic and the given policies' placers),
   pol_of[0] doppler's policy, pol_of[1] placeto's. */
static int bench_methods(cli *o, int *ms, int *n_ms, policies *ps, const dp_policy *pol_of[2])
{
    int want = 0, with_learned = 0;
    memset(ps, 0, sizeof *ps);
    if (parse_methods(o, ms, n_ms)) return EXIT_USAGE;
    for (int k = 0; k < *n_ms; k++) want |= ms[k] == METHOD_DOPPLER;
    if (policies_load(o, ps, want)) return EXIT_FAIL;
    if (ps->pretrained && !o->samples_set) o->samples = PRETRAINED_SAMPLES;
    if (!o->methods || !strcmp(o->methods, "all"))   /* all: with the given policies' placers */
        for (int i = ps->n - 1; i >= 0; i--)
            ms[(*n_ms)++] = ps->p[i].algo == DP_ALGO_PLACETO ? METHOD_PLACETO : METHOD_DOPPLER;
    pol_of[0] = pol_of[1] = NULL;
    for (int k = 0; k < *n_ms; k++) {
        const char *pp;
        if (!LEARNED(ms[k])) continue;
        with_learned = 1;
        if (!(pol_of[ms[k] == METHOD_PLACETO] = policy_for(ps, ms[k], &pp))) return EXIT_FAIL;
    }
    if (o->samples_set && !with_learned) return usage(o->cmd, "--samples is for methods doppler and placeto");
    if (o->from && !pol_of[1]) return usage(o->cmd, "--from is for method placeto");
    return 0;
}

/* The table's layout: column widths known up front, so that rows can be
   printed as they come. */
typedef struct bench_table { int wg, wm; const char *sep, *lead, *tail; } bench_table;

static void bench_header(const cli *o, const int *ms, int n_ms, bench_table *t)
{
    char gb[256];
    t->wg = 5;
    t->wm = 6;
    for (int i = 0; i < o->n_pos; i++) {
        int n = (int)strlen(base_name(o->pos[i], gb, sizeof gb));
        if (n > t->wg) t->wg = n;
    }
    for (int k = 0; k < n_ms; k++) {
        int n = (int)strlen(method_name(ms[k]));
        if (n > t->wm) t->wm = n;
    }
    t->sep = o->md ? " | " : "  ";
    t->lead = o->md ? "| " : "";
    t->tail = o->md ? " |" : "";
    if (o->json) {
        printf("[");
    } else {
        const char *sep = t->sep;
        printf("%s%-*s%s%6s%s%7s%s%-*s%s%12s%s%12s%s%7s%s%10s%s\n", t->lead, t->wg, "graph", sep,
               "ops", sep, "devices", sep, t->wm, "method", sep, "makespan", sep,
               "lower bound", sep, "ratio", sep, "seconds", t->tail);
        if (o->md) {
            const int widths[8] = {t->wg, 6, 7, t->wm, 12, 12, 7, 10};
            const int right[8] = {0, 1, 1, 0, 1, 1, 1, 1};
            for (int k = 0; k < 8; k++) {
                putchar('|');
                for (int j = 0; j < widths[k] + 2 - right[k]; j++) putchar('-');
                if (right[k]) putchar(':');
            }
            printf("|\n");
        }
    }
    fflush(stdout);
}

/* The best method on one graph, for the summary under the human table. */
typedef struct bench_best { char name[32]; double makespan, ratio; } bench_best;

/* One row of the table: a placement (res), or an infeasible cell (res
   NULL: nothing fits the devices' memory, why says so). */
static void bench_row(const cli *o, const bench_table *t, const char *path, const dp_graph *g, const dp_cluster *c,
                      int m, const dp_place_result *res, const char *why, double lb, double secs,
                      const int *assign, int row)
{
    if (o->json) {
        printf("%s\n{\"graph\": ", row ? "," : "");
        json_str(stdout, path);
        json_key_str(stdout, "method", method_name(m));
        printf(", \"devices\": %d, \"ops\": %d, \"infeasible\": %s", c->n, g->n_ops, res ? "false" : "true");
        if (!res) json_key_str(stdout, "reason", why);
        json_key_str(stdout, "fallback", fallback_name(res ? res->fallback : 0));
        if (res) {
            json_time_limited(o, res);
            json_result(o, res, lb, secs, assign, g->n_ops);
        } else {
            json_key_str(stdout, "order", order_name(o->order));
            fputs(", \"makespan\": null", stdout);
            json_key_num(stdout, "lower_bound", lb);
            fputs(", \"ratio\": null, \"schedule_length\": null, \"simulations\": 0", stdout);
            json_key_num(stdout, "seconds", secs);
            fputs(", \"assignment\": null", stdout);
        }
        printf("}");
    } else {
        /* the makespan, '*' when it is the best single device's, '~'
           when a clock stopped the search (the legends under the table),
           or "infeasible" */
        char rb[32], mb[48], gb[256];
        const char *sep = t->sep;
        if (!res) snprintf(mb, sizeof mb, "infeasible");
        else snprintf(mb, sizeof mb, "%.6g%s%s", res->makespan, !res->fallback ? "" : o->md ? "\\*" : "*", res->time_limited ? "~" : "");
        printf("%s%-*s%s%6d%s%7d%s%-*s%s%12s%s%12.6g%s%7s%s%10.6f%s\n", t->lead, t->wg,
               base_name(path, gb, sizeof gb), sep, g->n_ops, sep, c->n, sep, t->wm,
               method_name(m), sep, mb, sep, lb, sep,
               res ? fmt_ratio(rb, sizeof rb, ratio_of(res->makespan, lb)) : "-", sep, secs, t->tail);
    }
}

/* Every method on the graph at path: one row each; a method that finds
   no placement within the devices' memory gets an infeasible cell and the
   others go on. rows counts the rows printed so far (JSON separators);
   *fell is set where the best single device replaced the method's answer,
   *stopped where a clock stopped its search. */
static int bench_graph(const cli *o, const char *path, const int *ms, int n_ms, const dp_policy *const pol_of[2],
                       const bench_table *t, bench_best *best, int *rows, int *fell, int *stopped)
{
    dp_graph g;
    dp_cluster c;
    int rc = EXIT_OK;
    best->makespan = INFINITY;
    if (load_input(o, path, &g, &c)) return EXIT_FAIL;
    int *assign = calloc((size_t)g.n_ops + 1, sizeof *assign);
    int *order = calloc((size_t)g.n_ops + 1, sizeof *order);
    double lb = dp_lower_bound(&g, &c);
    if (!assign || !order) rc = oom();
    for (int k = 0; rc == EXIT_OK && k < n_ms; k++) {
        dp_place_result res;
        dp_error e = {0};
        double secs = 0;
        int prc = run_method(o, ms[k], pol_of[ms[k] == METHOD_PLACETO], &g, &c, NULL, assign, order, &res, &secs, path, &e);
        if (prc && prc != DP_ERR_INFEASIBLE) {
            rc = EXIT_FAIL;
            continue;
        }
        if (!prc && res.makespan < best->makespan) {
            best->makespan = res.makespan;
            best->ratio = ratio_of(res.makespan, lb);
            snprintf(best->name, sizeof best->name, "%s%s", method_name(ms[k]), res.fallback ? "*" : "");
        }
        if (!prc && res.fallback) *fell = 1;
        if (!prc && res.time_limited) *stopped = 1;
        bench_row(o, t, path, &g, &c, ms[k], prc ? NULL : &res, e.msg, lb, secs, assign, *rows);
        (*rows)++;
        fflush(stdout);
    }
    free(order);
    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}

static int cmd_bench(cli *o)
{
    if (o->n_pos < 1) return usage(o->cmd, "expects at least one GRAPH");
    int ms[64], n_ms, rc, rows = 0, fell = 0, stopped = 0;
    policies ps;
    const dp_policy *pol_of[2];
    bench_table t;
    outs w;   /* no outputs: refuses '-' as an input */
    const named inputs[] = {{"--cluster", o->cluster}, {"--policy", o->policy}, {"--policy", o->policy2}};
    if ((rc = outs_check_pos(o, &w, NULL, 0, "GRAPH", o->n_pos, inputs, 3))) return rc;
    if ((rc = bench_methods(o, ms, &n_ms, &ps, pol_of))) { policies_free(&ps); return rc; }
    bench_best *best = calloc((size_t)o->n_pos, sizeof *best);
    if (!best) { policies_free(&ps); return oom(); }
    bench_header(o, ms, n_ms, &t);
    for (int i = 0; i < o->n_pos; i++)
        if (bench_graph(o, o->pos[i], ms, n_ms, pol_of, &t, &best[i], &rows, &fell, &stopped)) rc = EXIT_FAIL;
    policies_free(&ps);
    if (fell && !o->json)
        printf("%s%s a fallback: the best single device, which beat the method's own placement (or the method found none within memory), or for a learned method whose placements all met a memory dead end, pipeline's\n",
               o->md ? "\n" : "", o->md ? "\\*" : "*");
    if (stopped && !o->json) {
        const char *gap = o->md && !fell ? "\n" : "";
        if (o->time_limit) printf("%s~ stopped by --time-limit %g s: the best placement found so far\n", gap, o->time_limit);
        else printf("%s~ stopped by anneal's or enumopt's default time bound, %g s (no --budget or --time-limit given): the best placement found so far\n",
                    gap, DP_ANNEAL_TIME_BOUND);
    }
    if (o->json) {
        printf("%s]\n", rows ? "\n" : "");
    } else if (!o->md) {
        for (int i = 0, header = 0; i < o->n_pos; i++) {
            char rb[32], gb[256];
            if (!best[i].name[0]) continue;
            if (!header++) printf("\nbest per graph:\n");
            printf("  %-*s  %-*s  %12.6g  (%s x lower bound)\n", t.wg,
                   base_name(o->pos[i], gb, sizeof gb), t.wm, best[i].name, best[i].makespan,
                   fmt_ratio(rb, sizeof rb, best[i].ratio));
        }
    }
    free(best);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler train
   ---------------------------------------------------------------------- */
#define MEAN_WINDOW 50

typedef struct stage_sum {
    int ran, episodes;
    double seconds, last, last_ratio, mean, mean_ratio, best, best_ratio, final_cost;
} stage_sum;

/* State of the on_episode callback: the curve records, the running mean
   of the last MEAN_WINDOW costs and the progress display. */
typedef struct train_ctx {
    dp_episode_info *rec;
    int n_rec, cap_rec, nomem;
    FILE *out;                  /* progress and summaries                 */
    int tty;                    /* redraw one line, else a line per stage */
    int cols;                   /* the terminal's width (0: unknown)      */
    int stage;                  /* the stage being shown, -1 before any  */
    double win[MEAN_WINDOW], win_ratio[MEAN_WINDOW];
    int win_n, win_i;
    double best, best_ratio;    /* over the stage (lowest ratio)          */
    double last_draw;
    dp_episode_info last;
    stage_sum sum[DP_STAGE__COUNT];
    /* --progress (or stderr a terminal) where the display above is not
       shown: progress_line's on stderr about once a second */
    progress_ctx pc;
    int report;
    double next_report;
    /* stage real under mpirun: rank 0 beats (dp_exec_mpi_beat) about
       once a second, so that the ranks waiting for its next placement
       know it is alive */
    const dp_exec_opts *lead;
    double next_beat;
    dp_error beat_err;
} train_ctx;

static void window_means(const train_ctx *t, double *mean, double *mean_ratio)
{
    double a = 0, b = 0;
    for (int i = 0; i < t->win_n; i++) { a += t->win[i]; b += t->win_ratio[i]; }
    *mean = t->win_n ? a / t->win_n : 0;
    *mean_ratio = t->win_n ? b / t->win_n : 0;
}

/* The stage just shown is over: its summary line. */
static void stage_done(train_ctx *t)
{
    if (t->stage < 0) return;
    const dp_episode_info *i = &t->last;
    stage_sum *s = &t->sum[t->stage];
    s->ran = 1;
    s->episodes = i->episode + 1;
    s->seconds = i->seconds;
    s->last = i->cost;
    s->last_ratio = ratio_of(i->cost, i->lower_bound);
    window_means(t, &s->mean, &s->mean_ratio);
    s->best = t->best;
    s->best_ratio = t->best_ratio;
    if (t->tty) fputs("\r\033[K", t->out);
    fprintf(t->out, "stage %-4s %6d episodes  %7.2f s  %7.1f ep/s  last %.6g (%.3fx)  "
            "mean%d %.6g (%.3fx)  best %.6g (%.3fx)\n",
            dp_stage_name((dp_stage)t->stage), s->episodes, s->seconds,
            s->seconds > 0 ? s->episodes / s->seconds : 0.0, s->last, s->last_ratio,
            MEAN_WINDOW, s->mean, s->mean_ratio, s->best, s->best_ratio);
    fflush(t->out);
    t->stage = -1;
}

static int on_episode(void *ctx, const dp_episode_info *i)
{
    train_ctx *t = ctx;
    if (t->n_rec == t->cap_rec) {
        int cap = t->cap_rec ? 2 * t->cap_rec : 1024;
        dp_episode_info *r = realloc(t->rec, (size_t)cap * sizeof *r);
        if (!r) { t->nomem = 1; return 1; }
        t->rec = r;
        t->cap_rec = cap;
    }
    t->rec[t->n_rec++] = *i;
#ifdef DP_WITH_MPI
    if (t->lead && dp_now() >= t->next_beat) {
        t->next_beat = dp_now() + 1;
        if (dp_exec_mpi_beat(t->lead, &t->beat_err)) return 1;   /* training stops; the error is told */
    }
#endif
    if ((int)i->stage != t->stage) {
        stage_done(t);
        t->stage = (int)i->stage;
        t->win_n = t->win_i = 0;
        t->best = INFINITY;
        t->best_ratio = INFINITY;
        t->last_draw = 0;
    }
    double r = ratio_of(i->cost, i->lower_bound);
    t->win[t->win_i] = i->cost;
    t->win_ratio[t->win_i] = r;
    t->win_i = (t->win_i + 1) % MEAN_WINDOW;
    if (t->win_n < MEAN_WINDOW) t->win_n++;
    if (r < t->best_ratio) { t->best_ratio = r; t->best = i->cost; }
    t->last = *i;
    if (t->tty) {
        double now = dp_now();
        if (now - t->last_draw >= 0.1 || i->episode + 1 == i->episodes) {
            double mean, mean_ratio;
            char line[512], left[48] = "";
            t->last_draw = now;
            window_means(t, &mean, &mean_ratio);
            if (t->pc.limit > 0) snprintf(left, sizeof left, " left %.0f s", fmax(0, t->pc.limit - (now - t->pc.t0)));
            snprintf(line, sizeof line, "%s %d/%d %.0f/s last %.4g %.2fx mean%d %.4g %.2fx "
                     "best %.4g %.2fx eps %.2f loss %.2g%s",
                     dp_stage_name(i->stage), i->episode + 1, i->episodes,
                     i->seconds > 0 ? (i->episode + 1) / i->seconds : 0.0, i->cost, r,
                     MEAN_WINDOW, mean, mean_ratio, t->best, t->best_ratio, i->epsilon, i->loss, left);
            if (t->cols > 1 && (int)strlen(line) >= t->cols) line[t->cols - 1] = 0;
            fprintf(t->out, "\r\033[K%s", line);
            fflush(t->out);
        }
    } else if (t->report && dp_now() >= t->next_report) {
        char what[64];
        t->next_report = dp_now() + 1;
        snprintf(what, sizeof what, "%s episodes", dp_stage_name(i->stage));
        progress_line(&t->pc, i->episode + 1, i->episodes, what, t->best);
    }
    return 0;
}

static int check_backend(const cli *o);
static dp_exec_fn backend_fn(const cli *o);

/* The training set: every GRAPH on each listed device count, each on its
   own cluster in its own units (or --cluster), with the best placement
   training finds for each. */
typedef struct train_set {
    int n, nd, loaded;               /* graphs x device counts; loaded so far */
    dp_graph *g;
    dp_cluster *cs;
    const dp_cluster **csp;
    const dp_graph **gp;
    const char **path;
    double *best;
    int **best_a, **best_o;
} train_set;

static void train_set_free(train_set *ts)
{
    for (int i = 0; ts->best_a && i < ts->n; i++) free(ts->best_a[i]);
    for (int i = 0; ts->best_o && i < ts->n; i++) free(ts->best_o[i]);
    for (int i = 0; ts->g && i < ts->loaded; i++) dp_graph_free(&ts->g[i]);
    for (int i = 0; ts->cs && i < ts->n; i++) dp_cluster_free(&ts->cs[i]);
    free(ts->best_a); free(ts->best_o); free(ts->best);
    free(ts->gp); free(ts->g); free(ts->cs); free(ts->csp); free(ts->path);
    memset(ts, 0, sizeof *ts);
}

static int train_set_load(const cli *o, train_set *ts)
{
    memset(ts, 0, sizeof *ts);
    ts->nd = o->n_dev_list > 1 ? o->n_dev_list : 1;
    int n = ts->n = o->n_pos * ts->nd;
    ts->g = calloc((size_t)n, sizeof *ts->g);
    ts->cs = calloc((size_t)n, sizeof *ts->cs);
    ts->csp = calloc((size_t)n, sizeof *ts->csp);
    ts->path = calloc((size_t)n, sizeof *ts->path);
    ts->gp = calloc((size_t)n, sizeof *ts->gp);
    ts->best = calloc((size_t)n, sizeof *ts->best);
    ts->best_a = calloc((size_t)n, sizeof *ts->best_a);
    ts->best_o = calloc((size_t)n, sizeof *ts->best_o);
    if (!ts->g || !ts->cs || !ts->csp || !ts->path || !ts->gp || !ts->best || !ts->best_a || !ts->best_o) return oom();
    for (; ts->loaded < n; ts->loaded++) {
        int i = ts->loaded;
        ts->path[i] = o->pos[i / ts->nd];
        if (load_graph(ts->path[i], o->fmt, &ts->g[i])) return EXIT_FAIL;
        ts->gp[i] = &ts->g[i];
        ts->best_a[i] = calloc((size_t)ts->g[i].n_ops + 1, sizeof(int));
        ts->best_o[i] = calloc((size_t)ts->g[i].n_ops + 1, sizeof(int));
        if (!ts->best_a[i] || !ts->best_o[i]) { ts->loaded++; return oom(); }
    }
    for (int i = 0; i < n; i++) {   /* which each graph must fit */
        cli oi = *o;
        if (ts->nd > 1) oi.devices = o->dev_list[i % ts->nd];
        if (make_cluster(&oi, ts->path[i], &ts->g[i], &ts->cs[i])) return EXIT_FAIL;
        ts->csp[i] = &ts->cs[i];
        double rtot, rmax;
        int rop;
        resident_totals(&ts->g[i], &rtot, &rmax, &rop);
        if (o->n_mem_ratio && rtot > 0) {
            /* --memory-ratio: a graph that holds weights gets devices of
               its one-device static memory / K (K: the device count's) */
            double k = o->mem_ratio[o->n_mem_ratio > 1 ? i % ts->nd : 0], *b = calloc((size_t)ts->cs[i].n + 1, sizeof *b);
            int *one = calloc((size_t)ts->g[i].n_ops + 1, sizeof *one);
            if (!b || !one) { free(b); free(one); return oom(); }
            dp_static_memory(&ts->g[i], &ts->cs[i], one, b);
            for (int d = 0; d < ts->cs[i].n; d++) ts->cs[i].memory[d] = b[0] / k;
            free(b); free(one);
        }
    }
    return 0;
}

static int train_check_args(const cli *o, int placeto)
{
    if (o->n_pos < 1) return usage(o->cmd, "expects at least one GRAPH");
    if (!o->out) return usage(o->cmd, "--out POLICY.dpl is required");
    if (!placeto && o->from) return usage(o->cmd, "--from is for --algo placeto");
    if (placeto && o->shared_gnn) return usage(o->cmd, "--shared-gnn is for --algo doppler");
    if (o->init && (o->hidden || o->layers || o->shared_gnn || o->insertion))
        return usage(o->cmd, "--hidden, --layers, --shared-gnn and --insertion are the --init policy's");
    if (placeto && o->insertion) return usage(o->cmd, "--insertion is for --algo doppler");
    if (placeto && o->rollouts) return usage(o->cmd, "--rollouts is for --algo doppler");
    if (placeto && (o->temperature || o->greedy_baseline || o->self_imitation || o->adv_norm || o->step_baseline || o->anchor || o->anchor_rate || o->select || o->ppo || o->ppo_clip || o->critic || o->critic_lr))
        return usage(o->cmd, "--temperature, --greedy-baseline, --self-imitation, --adv-norm, --step-baseline off, --anchor, --select, --ppo, --ppo-clip, --critic and --critic-lr are for --algo doppler");
    if (o->critic && o->step_baseline < 0) return usage(o->cmd, "--critic is a per-step baseline: not with --step-baseline off");
    if (!placeto && (o->reinforce || o->tau)) return usage(o->cmd, "--reinforce and --tau are for --algo placeto");
    if (o->reinforce && o->tau) return usage(o->cmd, "--tau is for placeto's one-step improvement: not with --reinforce");
    if (placeto && (o->op_logits || o->op_prior || o->op_restart)) return usage(o->cmd, "--op-logits, --op-prior and --op-restart are for --algo doppler");
    if ((o->op_prior || o->op_restart) && !o->op_logits) return usage(o->cmd, "--op-prior and --op-restart are for --op-logits");
    if (o->op_logits && (o->n_pos != 1 || o->n_dev_list > 1)) return usage(o->cmd, "--op-logits needs exactly one GRAPH and one device count (per-op logits belong to one graph)");
    if (o->out_assign && (o->n_pos != 1 || o->n_dev_list > 1)) return usage(o->cmd, "--out-assign needs exactly one GRAPH and one device count");
    if (placeto && o->n_dev_list > 1) return usage(o->cmd, "--devices: a list is for --algo doppler (a placeto policy is tied to its device count)");
    if (o->n_mem_ratio > 1 && o->n_mem_ratio != (o->n_dev_list > 1 ? o->n_dev_list : 1))
        return usage(o->cmd, "--memory-ratio: %d values for %d device counts (give one, or one per count)", o->n_mem_ratio, o->n_dev_list > 1 ? o->n_dev_list : 1);
    if (o->n_mem_ratio && o->memory_set) return usage(o->cmd, "--memory-ratio and --memory: one or the other");
    return 0;
}

/* The command line's training options into to (stages, episodes and rates
   are set already); 0 means "the default" to the library. */
static void train_opts_from_cli(const cli *o, train_set *ts, train_ctx *t, dp_train_opts *to)
{
    to->entropy = o->entropy > 0 ? o->entropy : (o->entropy_set ? -1 : 0);   /* < 0: no bonus */
    to->order = o->order;
    to->seed = o->seed;
    to->start = o->from;
    to->rollouts = o->rollouts;
    to->temperature = o->temperature;
    to->greedy_baseline = o->greedy_baseline;
    to->self_imitation = o->self_imitation;
    to->adv_norm = o->adv_norm;
    to->ppo_epochs = o->ppo;
    to->ppo_clip = o->ppo_clip;
    to->critic = o->critic;
    to->critic_lr = o->critic_lr;
    to->op_logits = o->op_logits;
    to->op_prior = o->op_prior;
    to->op_restart = o->op_restart;
    to->placeto_reinforce = o->reinforce;
    to->placeto_tau = o->tau;
    to->anchor = o->anchor;
    to->anchor_rate = o->anchor_rate;
    to->select = o->select;
    /* on also for stage real's cost, which is in the graph's time units */
    to->step_baseline = o->step_baseline < 0 ? -1 : 1;
    to->best_cost = ts->best;
    to->best_assign = ts->best_a;
    to->best_order = ts->best_o;
    to->on_episode = on_episode;
    to->on_episode_ctx = t;
    to->clusters = ts->csp;
    to->time_limit = o->time_limit;
}

/* Stage real's cost: the executor's wall time with --backend, else the
   simulator's makespan (as a cost of its own: best placements and
   selection as for an executor's). */
static int train_runtime(const cli *o, int have_real, dp_runtime *rt, dp_exec_opts *eo, dp_train_opts *to)
{
    memset(rt, 0, sizeof *rt);
    memset(eo, 0, sizeof *eo);
    rt->order = o->order;
    rt->reps = o->reps ? o->reps : 1;
    eo->dispatch = o->dispatch;
    rt->exec_opts = eo;
    if (o->backend) {
        int rc = check_backend(o);
        if (rc) return rc;
        rt->exec = backend_fn(o);
#ifdef DP_WITH_MPI
        if (!strcmp(o->backend, "mpi")) { rt->exec = dp_exec_mpi_lead; eo->mpi = &cli_mpi.mo; }   /* rank 0 leads, the others follow */
#endif
    } else if (o->dispatch != DP_DISPATCH_DYNAMIC) {
        return usage(o->cmd, "--dispatch static and graph need --backend cuda");
    }
#ifdef DP_WITH_CUDA
    if (have_real && o->backend && !strcmp(o->backend, "cuda")) {
        /* fail before training, not when stage real begins */
        dp_error e = {0};
        int ngpu = 0;
        if (dp_cuda_device_count(&ngpu, &e) || ngpu == 0) {
            fprintf(stderr, "doppler train: no CUDA device: %s\n", ngpu == 0 && !e.code ? "the CUDA runtime reports 0 devices" : e.msg);
            return EXIT_FAIL;
        }
    }
#endif
    if (have_real) {
        to->cost = dp_runtime_cost;   /* the library uses it for stage real only */
        to->cost_ctx = rt;
    }
    return 0;
}

static void train_print_header(const cli *o, const train_set *ts, const train_ctx *t, const dp_policy *pol,
                               int placeto, int have_real, const dp_runtime *rt)
{
    char dev[160];
    int n = ts->n;
    cluster_label(o, &ts->cs[0], dev, sizeof dev);
    if (ts->nd > 1) {   /* the list: "2,4,8" */
        int len = 0;
        for (int k = 0; k < ts->nd && len < (int)sizeof dev - 8; k++)
            len += snprintf(dev + len, sizeof dev - (size_t)len, "%s%d", k ? "," : "", o->dev_list[k]);
    }
    if (placeto)
        fprintf(t->out, "training placeto on %d graph%s, %s devices, %s order, sweeps from %s; "
                "policy: hidden %d, %d forward/backward pass pair%s, %d parameters\n", n, n == 1 ? "" : "s",
                dev, order_name(o->order), o->from ? o->from : "cp", pol->opts.hidden,
                pol->opts.layers, pol->opts.layers == 1 ? "" : "s", pol->n_plc);
    else
        fprintf(t->out, "training on %d graph%s, %s devices, %s order; policy: hidden %d, %d layers%s%s, "
                "%d + %d parameters\n", o->n_pos, o->n_pos == 1 ? "" : "s", dev, order_name(o->order),
                pol->opts.hidden, pol->opts.layers, pol->opts.shared_gnn ? ", shared GNN" : "",
                pol->opts.insertion ? ", insertion" : "", pol->n_sel, pol->n_plc);
    if (have_real && o->backend)
        fprintf(t->out, "stage real: costs are the %s executor's wall time (median of %d run%s, in the graph's time units)\n",
                !strcmp(o->backend, "cuda") ? "CUDA" : !strcmp(o->backend, "mpi") ? "MPI" : "CPU", rt->reps, rt->reps == 1 ? "" : "s");
    else if (have_real)
        fprintf(t->out, "stage real: no --backend given, costs come from the simulator\n");
    fflush(t->out);
}

/* Training stopped (a cost, loss or gradient that is not finite, a failed
   runtime): the policy is as after its last good update; keep that, never
   a half-updated one (dp_policy_save refuses parameters that are not
   finite, and a regular file is written to PATH.tmp, then renamed). */
static void train_stopped(const cli *o, outs *w, const train_ctx *t, const dp_train_result *res, const dp_policy *pol)
{
    dp_error es = {0};
    const char *to;
    if (res->episodes == 0) {
        fprintf(stderr, "doppler: no episode completed: nothing written to %s\n", o->out);
        return;
    }
    /* the policy and the curve up to there, put in place together */
    if (!(to = out_name(w, o->out))) return;
    if (dp_policy_save(pol, to, &es)) {
        fprintf(stderr, "doppler: the last good policy could not be written either: %s\n", es.msg);
        return;
    }
    if (o->curve && (!(to = out_name(w, o->curve)) || (dp_curve_csv(to, t->rec, t->n_rec, &es) ? fail(&es) : 0))) return;
    if (outs_commit(w)) return;
    fprintf(stderr, "doppler: wrote the last good policy (after %ld episode%s) to %s\n",
            res->episodes, res->episodes == 1 ? "" : "s", o->out);
    if (o->curve) fprintf(stderr, "doppler: the curve up to there: %s\n", o->curve);
}

/* The policy, the best assignment, the curve and its chart. */
static int train_write(const cli *o, outs *w, const train_set *ts, const train_ctx *t, const dp_policy *pol)
{
    dp_error e = {0};
    const char *to;
    if (!(to = out_name(w, o->out))) return EXIT_FAIL;
    if (dp_policy_save(pol, to, &e)) return fail(&e);
    if (o->out_assign && write_placement(w, o->out_assign, &ts->g[0], ts->best_a[0], o->pos[0], "doppler (training)",
                                         ts->cs[0].n, ts->best[0])) return EXIT_FAIL;
    if (o->curve && (!(to = out_name(w, o->curve)) || dp_curve_csv(to, t->rec, t->n_rec, &e))) return to ? fail(&e) : EXIT_FAIL;
    if (o->curve_svg) {
        char title[512], gb[256];
        if (ts->n == 1)
            snprintf(title, sizeof title, "%s on %d devices", base_name(o->pos[0], gb, sizeof gb), ts->cs[0].n);
        else if (ts->nd > 1)
            snprintf(title, sizeof title, "%d graphs on %d device counts", o->n_pos, ts->nd);
        else
            snprintf(title, sizeof title, "%d graphs on %d devices", ts->n, ts->cs[0].n);
        if (!(to = out_name(w, o->curve_svg))) return EXIT_FAIL;
        if (dp_curve_svg(to, t->rec, t->n_rec, title, &e)) return fail(&e);
    }
    return outs_commit(w);
}

/* The trained policy's greedy placement of each graph. */
static int train_greedy(const cli *o, const train_set *ts, const dp_policy *pol, double *greedy)
{
    for (int i = 0; i < ts->n; i++) {
        dp_error e = {0};
        int *a = calloc((size_t)ts->g[i].n_ops + 1, sizeof *a);
        dp_infer_opts io = {0};
        io.order = o->order;
        io.start = o->from;
        if (!a) return oom();
        int rc = dp_policy_place(pol, &ts->g[i], &ts->cs[i], &io, a, NULL, &greedy[i], &e);
        free(a);
        if (rc) return fail(&e);
    }
    return 0;
}

static void train_print_json(const cli *o, const train_set *ts, const train_ctx *t, const dp_policy *pol,
                             const dp_train_opts *to, const dp_train_result *res, const double *greedy,
                             int placeto, int have_real)
{
    int n = ts->n, nd = ts->nd;
    printf("{\"graphs\": [");
    for (int i = 0; i < o->n_pos; i++) {
        if (i) fputs(", ", stdout);
        json_str(stdout, o->pos[i]);
    }
    if (nd > 1) {
        fputs("], \"devices\": [", stdout);
        for (int k = 0; k < nd; k++) printf("%s%d", k ? ", " : "", o->dev_list[k]);
        fputc(']', stdout);
    } else {
        printf("], \"devices\": %d", ts->cs[0].n);
    }
    json_key_str(stdout, "algo", placeto ? "placeto" : "doppler");
    if (placeto) json_key_str(stdout, "from", o->from ? o->from : "cp");
    json_key_str(stdout, "order", order_name(o->order));
    json_key_str(stdout, "policy", o->out);
    if (o->init) json_key_str(stdout, "init", o->init);
    printf(", \"hidden\": %d, \"layers\": %d, \"shared_gnn\": %s, \"insertion\": %s, \"parameters\": %d",
           pol->opts.hidden, pol->opts.layers, pol->opts.shared_gnn ? "true" : "false",
           pol->opts.insertion ? "true" : "false", pol->n_sel + pol->n_plc);
    if (o->op_logits) {
        printf(", \"op_logits\": %.17g", o->op_logits);
        if (o->op_prior) printf(", \"op_prior\": %.17g", o->op_prior);
        else printf(", \"op_prior\": null");
        printf(", \"op_restart\": %d", o->op_restart ? o->op_restart : DP_OP_RESTART);
    }
    printf(", \"seed\": %llu, \"episodes\": %ld, \"simulations\": %ld",
           (unsigned long long)o->seed, res->episodes, res->simulations);
    if (o->time_limit) printf(", \"time_limited\": %s", res->time_limited ? "true" : "false");
    json_key_num(stdout, "seconds", res->seconds);
    json_key_num(stdout, "episodes_per_second", res->seconds > 0 ? res->episodes / res->seconds : 0);
    json_key_str(stdout, "real_costs", !have_real ? NULL : !o->backend ? "simulator" : !strcmp(o->backend, "cuda") ? "cuda executor" : !strcmp(o->backend, "mpi") ? "mpi executor" : "cpu executor");
    fputs(",\n \"stages\": [", stdout);
    for (int k = 0, first = 1; k < DP_STAGE__COUNT; k++) {
        if (!to->episodes[k]) continue;   /* a stage not listed */
        const stage_sum *s = &t->sum[k];
        printf("%s\n  {\"stage\": \"%s\", \"episodes\": %d", first ? "" : ",",
               dp_stage_name((dp_stage)k), s->episodes);
        first = 0;
        json_key_num(stdout, "seconds", s->seconds);
        json_key_num(stdout, "episodes_per_second", s->seconds > 0 ? s->episodes / s->seconds : 0);
        json_key_num(stdout, "last", s->last);
        json_key_num(stdout, "last_ratio", s->last_ratio);
        json_key_num(stdout, "mean50", s->mean);
        json_key_num(stdout, "mean50_ratio", s->mean_ratio);
        json_key_num(stdout, "best", s->best);
        json_key_num(stdout, "best_ratio", s->best_ratio);
        json_key_num(stdout, "final_cost", res->final_cost[k]);
        json_key_num(stdout, "kept", res->kept[k]);
        fputc('}', stdout);
    }
    for (int list = 0; list < 2; list++) {   /* greedy, then best_found */
        fputs(list ? "],\n \"best_found\": [" : "],\n \"greedy\": [", stdout);
        for (int i = 0; i < n; i++) {
            double lb = dp_lower_bound(&ts->g[i], &ts->cs[i]), v = list ? ts->best[i] : greedy[i];
            printf("%s\n  {\"graph\": ", i ? "," : "");
            json_str(stdout, ts->path[i]);
            if (nd > 1) printf(", \"devices\": %d", ts->cs[i].n);
            json_key_num(stdout, list ? "cost" : "makespan", v);
            if (!list) json_key_num(stdout, "lower_bound", lb);
            json_key_num(stdout, "ratio", ratio_of(v, lb));
            fputc('}', stdout);
        }
    }
    fputs("]", stdout);
    json_key_str(stdout, "out_assign", o->out_assign);
    fputs("}\n", stdout);
}

static void train_print_text(const cli *o, const train_set *ts, const dp_train_opts *to,
                             const dp_train_result *res, const double *greedy, int have_real)
{
    char rb[32], gb[256];
    printf("trained %ld episodes, %ld simulations, in %.2f s (%.1f episodes/s)\n", res->episodes, res->simulations,
           res->seconds, res->seconds > 0 ? res->episodes / res->seconds : 0);
    if (res->time_limited)
        printf("stopped by --time-limit %g s: the policy is the one at the stop (a stage with --select keeps its best-scored parameters; "
               "the later stages did not run)\n", o->time_limit);
    for (int k = 0; k < DP_STAGE__COUNT; k++)
        if (to->episodes[k] && res->kept[k] >= 0)
            printf("stage %s kept the parameters after its episode %d of %d (the best greedy placement; --select)\n",
                   dp_stage_name((dp_stage)k), res->kept[k], to->episodes[k]);
    for (int i = 0; i < ts->n; i++) {
        double lb = dp_lower_bound(&ts->g[i], &ts->cs[i]);
        char on[32] = "";
        if (ts->nd > 1) snprintf(on, sizeof on, " on %d devices", ts->cs[i].n);
        printf("greedy placement of %s%s: makespan %.6g (%s x lower bound %.6g)\n",
               base_name(ts->path[i], gb, sizeof gb), on, greedy[i],
               fmt_ratio(rb, sizeof rb, ratio_of(greedy[i], lb)), lb);
        printf("best placement found in training: %s %.6g (%s x lower bound)\n",
               have_real ? "cost" : "makespan", ts->best[i], fmt_ratio(rb, sizeof rb, ratio_of(ts->best[i], lb)));
    }
    printf("policy           %s\n", o->out);
    if (o->out_assign) printf("best assignment  %s\n", o->out_assign);
    if (o->curve) printf("curve            %s\n", o->curve);
    if (o->curve_svg) printf("curve chart      %s\n", o->curve_svg);
}

static int cmd_train(cli *o)
{
    int placeto = o->algo && !strcmp(o->algo, "placeto"), rc;
    if ((rc = train_check_args(o, placeto))) return rc;
    /* stages, episodes and learning rates, one per listed stage */
    dp_train_opts to = {0};
    dp_error e = {0};
    if (dp_train_stages_parse(&to, o->stages ? o->stages : placeto ? "sim" : "il,sim", o->episodes, o->lr, &e))
        return usage(o->cmd, "--%s", e.msg);
    int have_real = to.episodes[DP_STAGE_REAL] > 0;
    outs w;
    const named outputs[] = {{"--out", o->out}, {"--out-assign", o->out_assign}, {"--curve", o->curve},
                             {"--curve-svg", o->curve_svg}};
    const named inputs[] = {{"--cluster", o->cluster}, {"--init", o->init && strcmp(o->init, "pretrained") ? o->init : NULL}};
    /* under mpirun (--backend mpi) rank 0 trains and writes; the others
       run the placements it sends (dp_exec_mpi_follow) */
    int mpi = o->backend && !strcmp(o->backend, "mpi"), lead = 0;
    if (mpi && o->n_pos != 1) return usage(o->cmd, "--backend mpi trains on one GRAPH (every rank runs it)");
    memset(&w, 0, sizeof w);
    rc = mpi && cli_mpi.rank != 0 ? 0 : outs_check_pos(o, &w, outputs, 4, "GRAPH", o->n_pos, inputs, 2);
    if (mpi) rc = mpi_step(rc);
    if (rc) { outs_free(&w); return rc; }

    train_set ts;
    train_ctx t;
    dp_policy pol;
    dp_runtime rt;
    dp_exec_opts rt_eo;     /* the executor options stage real runs with */
    double *greedy = NULL;
    memset(&rt_eo, 0, sizeof rt_eo);
    memset(&pol, 0, sizeof pol);
    memset(&t, 0, sizeof t);
    t.stage = -1;
    t.out = o->json ? stderr : stdout;
    t.tty = isatty(fileno(t.out));
    if (t.tty) {
        struct winsize ws;
        if (ioctl(fileno(t.out), TIOCGWINSZ, &ws) == 0) t.cols = ws.ws_col;
    }
    rc = EXIT_FAIL;
    int lrc = train_set_load(o, &ts) ? EXIT_FAIL : 0;
    if (mpi && !lrc && ts.nd > 1) lrc = usage(o->cmd, "--backend mpi trains on one cluster, not a list of device counts");
    if (mpi) lrc = mpi_step(lrc);   /* a rank that could not load fails them all */
    if (lrc) { rc = lrc; goto done; }
    if (mpi) {
#ifdef DP_WITH_MPI
        if (cli_mpi.rank != 0) {
            dp_exec_opts feo;
            memset(&feo, 0, sizeof feo);
            feo.mpi = &cli_mpi.mo;
            rc = dp_exec_mpi_follow(ts.gp[0], &ts.cs[0], &feo, &e) ? fail(&e) : EXIT_OK;
            goto done;
        }
#endif
        lead = 1;
    }
    if (o->init) {
        /* training goes on from a saved policy (or the pretrained one) */
        if (!strcmp(o->init, "pretrained") ? load_pretrained(&pol) : dp_policy_load(&pol, o->init, &e) ? fail(&e) : 0) goto done;
        if ((pol.algo == DP_ALGO_PLACETO) != placeto) {
            fprintf(stderr, "doppler train: --init %s: a %s policy, and --algo is %s\n", o->init,
                    pol.algo == DP_ALGO_PLACETO ? "placeto" : "doppler", placeto ? "placeto" : "doppler");
            goto done;
        }
    } else {
        dp_policy_opts po = {0};
        po.hidden = o->hidden;
        po.layers = o->layers;
        po.shared_gnn = o->shared_gnn;
        po.insertion = o->insertion;
        po.seed = o->seed;
        po.algo = placeto ? DP_ALGO_PLACETO : DP_ALGO_DOPPLER;
        po.devices = placeto ? ts.cs[0].n : 0;
        if (dp_policy_init(&pol, &po, &e)) { fail(&e); goto done; }
    }
    train_opts_from_cli(o, &ts, &t, &to);
    if ((rc = train_runtime(o, have_real, &rt, &rt_eo, &to))) goto done;
    rc = EXIT_FAIL;
    train_print_header(o, &ts, &t, &pol, placeto, have_real, &rt);

    dp_train_result res;
    memset(&res, 0, sizeof res);
    t.pc.method = "train";
    t.pc.t0 = dp_now();
    t.pc.limit = o->time_limit;
    t.pc.tty = isatty(2);
    t.report = !t.tty && (o->progress || t.pc.tty);   /* where the display on t.out is not shown */
    t.next_report = t.pc.t0 + 1;
    t.lead = lead ? &rt_eo : NULL;
    int trc = dp_train(&pol, (const dp_graph *const *)ts.gp, ts.n, NULL, &to, &res, &e);
    progress_end(&t.pc);
    stage_done(&t);
    if (t.nomem) {
        dp_error m = {DP_ERR_NOMEM, "out of memory recording the training curve"};
        fail(&m);
        goto done;
    }
    if (t.beat_err.code) { fail(&t.beat_err); goto done; }
    if (trc) {
        fail(&e);
        train_stopped(o, &w, &t, &res, &pol);
        goto done;
    }
    if (train_write(o, &w, &ts, &t, &pol)) goto done;
    if (!(greedy = calloc((size_t)ts.n, sizeof *greedy))) { oom(); goto done; }
    if (train_greedy(o, &ts, &pol, greedy)) goto done;
    if (o->json)
        train_print_json(o, &ts, &t, &pol, &to, &res, greedy, placeto, have_real);
    else
        train_print_text(o, &ts, &to, &res, greedy, have_real);
    rc = EXIT_OK;
done:
#ifdef DP_WITH_MPI
    /* the followers stop, unless a failed run (agreed: "rank R: ...")
       ended them already */
    if (lead && !(rc && !strncmp(cli_mpi.last.msg, "rank ", 5))) {
        dp_error se = {0};
        if (dp_exec_mpi_stop(&rt_eo, &se)) rc = fail(&se);
    }
#else
    (void)lead;
#endif
    outs_free(&w);
    free(greedy);
    train_set_free(&ts);
    free(t.rec);
    dp_policy_free(&pol);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler convert
   ---------------------------------------------------------------------- */
/* The graph, written to the output out of w (checked) and put in place. */
static int write_graph(outs *w, const dp_graph *g, const char *out, dp_format fmt)
{
    dp_error e = {0};
    const char *to = out_name(w, out);
    if (!to) return EXIT_FAIL;
    if (fmt == DP_FORMAT_AUTO && strcmp(out, "-")) fmt = dp_format_from_path(out);
    if (fmt == DP_FORMAT_AUTO) fmt = DP_FORMAT_NATIVE;
    if (dp_graph_write(g, to, fmt, &e)) return fail(&e);
    if (outs_commit(w)) return EXIT_FAIL;
    if (strcmp(out, "-"))
        printf("wrote %s (%s): %d ops, %d edges\n", out, dp_format_name(fmt),
               g->n_ops, g->n_edges);
    return 0;
}

static int cmd_convert(cli *o)
{
    if (o->n_pos != 2) return usage(o->cmd, "expects IN and OUT");
    dp_format to = DP_FORMAT_AUTO;
    if (o->to && (dp_format_parse(o->to, &to) || to == DP_FORMAT_AUTO))
        return usage(o->cmd, "--to: unknown format '%s' (native, doppler, stg, binary)", o->to);
    dp_graph g;
    outs w;
    const named outputs[] = {{"OUT", o->pos[1]}}, inputs[] = {{"IN", o->pos[0]}};
    int rc = outs_check(o, &w, outputs, 1, inputs, 1);
    if (rc) return rc;
    if (load_graph(o->pos[0], o->fmt, &g)) { outs_free(&w); return EXIT_FAIL; }
    rc = write_graph(&w, &g, o->pos[1], to) ? EXIT_FAIL : EXIT_OK;
    outs_free(&w);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler gen
   ---------------------------------------------------------------------- */
static int cmd_gen(cli *o)
{
    int workload = 0;
    if (o->n_pos != 1) return usage(o->cmd, "expects the shape: layered, random, chainmm, ffnn, llama-block, llama-layer or gpt");
    if (!strcmp(o->pos[0], "layered")) o->gen.shape = DP_GEN_LAYERED;
    else if (!strcmp(o->pos[0], "random")) o->gen.shape = DP_GEN_RANDOM;
    else if (!dp_workload_parse(o->pos[0], &o->wl.kind)) workload = 1;
    else return usage(o->cmd, "unknown shape '%s' (layered, random, chainmm, ffnn, llama-block, llama-layer, gpt)", o->pos[0]);
    if (!o->out) return usage(o->cmd, "-o GRAPH is required");
    if (o->wl.weights && !workload) return usage(o->cmd, "--weights is for the workloads (chainmm, ffnn, llama-block, llama-layer, gpt)");
    if (o->wl.vocab && !(workload && o->wl.kind == DP_WL_GPT)) return usage(o->cmd, "--vocab is for gpt");
    dp_graph g;
    dp_error e = {0};
    outs w;
    const named outputs[] = {{"-o", o->out}};
    int rc = outs_check(o, &w, outputs, 1, NULL, 0);
    if (rc) return rc;
    dp_graph_init(&g);
    if (workload ? dp_gen_workload(&g, &o->wl, &e) : dp_gen(&g, &o->gen, &e)) {
        dp_graph_free(&g);
        outs_free(&w);
        return fail(&e);
    }
    rc = write_graph(&w, &g, o->out, DP_FORMAT_AUTO) ? EXIT_FAIL : EXIT_OK;
    outs_free(&w);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler exec
   ---------------------------------------------------------------------- */
static int check_backend(const cli *o)
{
    if (!o->backend) return usage(o->cmd, "--backend cpu|cuda|mpi is required");
    if (!strcmp(o->backend, "mpi")) {
#ifdef DP_WITH_MPI
        if (o->dispatch != DP_DISPATCH_DYNAMIC) return usage(o->cmd, "--dispatch static and graph need --backend cuda");
        return 0;
#else
        fprintf(stderr, "doppler %s: built without MPI: this doppler was compiled without -DDP_WITH_MPI; use build/doppler_mpi "
                "(./build.sh builds it where mpicc is found: Debian's openmpi-bin and libopenmpi-dev) under mpirun, or --backend cpu\n", o->cmd);
        return EXIT_FAIL;
#endif
    }
    if (!strcmp(o->backend, "cpu"))   /* the CPU executor dispatches dynamically only */
        return o->dispatch == DP_DISPATCH_DYNAMIC ? 0 : usage(o->cmd, "--dispatch static and graph need --backend cuda");
    if (!strcmp(o->backend, "cuda")) {
#ifdef DP_WITH_CUDA
        return 0;
#else
        fprintf(stderr, "doppler %s: built without CUDA: this doppler was compiled without nvcc; rebuild with the "
                "CUDA toolkit installed (./build.sh finds nvcc) to use --backend cuda, or use --backend cpu\n", o->cmd);
        return EXIT_FAIL;
#endif
    }
    return usage(o->cmd, "--backend: unknown backend '%s' (cpu, cuda, mpi)", o->backend);
}

/* The executor of a checked backend. */
static dp_exec_fn backend_fn(const cli *o)
{
#ifdef DP_WITH_CUDA
    if (!strcmp(o->backend, "cuda")) return dp_exec_cuda;
#endif
#ifdef DP_WITH_MPI
    if (!strcmp(o->backend, "mpi")) return dp_exec_mpi;
#endif
    (void)o;
    return dp_exec_cpu;
}

/* What exec measured, for printing. */
typedef struct exec_report {
    const char *path;
    const dp_cluster *c;
    const dp_exec_result *r;
    int cuda, match, match_cpu;    /* match: -1 not checked */
    double predicted, cpu_err;
} exec_report;

/* exec --trace-svg: the measured schedule, drawn like the simulated one
   (s: the simulated run, overwritten) */
static int exec_trace_svg(const cli *o, outs *w, const exec_report *x, const dp_graph *g, dp_sim *s, const int *assign)
{
    const dp_exec_result *r = x->r;
    const dp_cluster *c = x->c;
    const char *path = x->path;
    int cuda = x->cuda;
    double predicted = x->predicted;
    dp_error e = {0};
    /* the measured schedule, drawn like the simulated one */
    char title[512];
    dp_gantt_opts go;
    double units = s->makespan > 0 ? predicted / s->makespan : 1.0;   /* seconds per model unit */
    memcpy(s->start, r->start, sizeof(double) * (size_t)g->n_ops);
    memcpy(s->end, r->end, sizeof(double) * (size_t)g->n_ops);
    memcpy(s->busy, r->busy, sizeof(double) * (size_t)c->n);
    if (s->peak_bytes && r->peak_bytes) memcpy(s->peak_bytes, r->peak_bytes, sizeof(double) * (size_t)c->n);   /* measured */
    s->makespan = r->wall_median;
    s->n_xfers = 0;
    if (cuda)
        snprintf(title, sizeof title, "%s: measured on the CUDA executor (%d logical devices on %d GPU%s, median of %d runs, seconds)",
                 path, c->n, r->gpus, r->gpus == 1 ? "" : "s", r->reps);
    else
        snprintf(title, sizeof title, "%s: measured on the %s executor (%d devices, median of %d runs, seconds)", path,
                 cli_mpi.on ? "MPI" : "CPU", c->n, r->reps);
    memset(&go, 0, sizeof go);
    go.title = title;
    go.hide_transfers = 1;
    go.lower_bound = dp_lower_bound(g, c) * units;
    const char *to = out_name(w, o->trace_svg);
    if (!to) return EXIT_FAIL;
    if (dp_gantt_svg(to, s, assign, &go, &e)) return fail(&e);
    return outs_commit(w);
}

/* --precision as the kernels' (exec, calibrate): fp32, tf32, bf16 with
   --backend cuda or mpi --mpi-devices cuda; with cpu or mpi on CPUs only
   fp32 (tf32 and bf16 there only as a preset cluster's precision); fp16
   and fp8 only as a preset's. */
static int kernel_precision(const cli *o, int *prec)
{
    static const char *const names[] = {"fp32", "tf32", "bf16"};
    int preset = o->cluster && is_preset_name(o->cluster);
    int cuda = o->backend && (!strcmp(o->backend, "cuda") || (!strcmp(o->backend, "mpi") && o->mpi_devices && !strcmp(o->mpi_devices, "cuda")));
    *prec = DP_PREC_DEFAULT;
    if (!o->precision) return 0;
    for (int i = 0; i < 3; i++)
        if (!strcmp(o->precision, names[i])) {
            if (cuda) *prec = DP_PREC_FP32 + i;
            else if (i && !preset)
                return usage(o->cmd, "--precision %s: the %s backend computes in fp32 only (tf32 and bf16 are --backend cuda's)", o->precision, o->backend ? o->backend : "cpu");
            return 0;
        }
    if (preset) return 0;   /* a preset's precision, the kernels' default */
    return usage(o->cmd, "--precision %s: the kernels compute in fp32, tf32 or bf16", o->precision);
}

static void exec_print(const cli *o, const exec_report *x)
{
    const dp_exec_result *r = x->r;
    const dp_cluster *c = x->c;
    const char *path = x->path;
    int cuda = x->cuda, match = x->match, match_cpu = x->match_cpu;
    double predicted = x->predicted, cpu_err = x->cpu_err;
if (o->json) {
    printf("{\"command\": \"exec\"");
    json_key_str(stdout, "graph", path);
    json_key_str(stdout, "backend", o->backend);
    printf(", \"devices\": %d, \"reps\": %d", c->n, r->reps);
    if (cli_mpi.on) printf(", \"ranks\": %d", cli_mpi.size);
    if (cli_mpi.on && o->mpi_devices && !strcmp(o->mpi_devices, "cuda"))
        printf(", \"mpi_devices\": \"cuda\", \"gpus\": %d, \"precision\": \"%s\"", r->gpus, dp_precision_name(r->precision));
    if (cuda) {
        printf(", \"gpus\": %d, \"precision\": \"%s\"", r->gpus, dp_precision_name(r->precision));
        json_key_str(stdout, "sharing", r->sharing == DP_SHARING_PARTITIONS ? "partitions" : r->sharing == DP_SHARING_SHARED ? "shared" : "none");
        if (r->sharing == DP_SHARING_SHARED) json_key_str(stdout, "sharing_note", r->sharing_note);
        if (r->sms) {
            printf(", \"sms\": [");
            for (int d = 0; d < c->n; d++) printf("%s%d", d ? ", " : "", r->sms[d]);
            printf("]");
        }
    }
    json_key_num(stdout, "wall_median", r->wall_median);
    printf(", \"wall_runs\": [");
    for (int i = 0; i < r->reps; i++) { if (i) printf(", "); json_num(stdout, r->wall_runs[i]); }
    printf("], \"busy\": [");
    for (int d = 0; d < c->n; d++) { if (d) printf(", "); json_num(stdout, r->busy[d]); }
    printf("]");
    json_key_num(stdout, "predicted", predicted);
    json_key_num(stdout, "seconds_per_unit", r->seconds_per_unit);
    printf(", \"outputs_match\": %s", match < 0 ? "null" : match ? "true" : "false");
    if (cuda) {
        json_key_num(stdout, "cpu_max_error", cpu_err < 0 ? NAN : cpu_err);
        json_key_num(stdout, "cpu_tolerance", dp_exec_tolerance(r->precision));
        printf(", \"outputs_match_cpu\": %s", match_cpu < 0 ? "null" : match_cpu ? "true" : "false");
    }
    printf("}\n");
} else {
    printf("%-16s %s\n", "graph", path);
    if (cuda)
        printf("%-16s cuda, %d logical devices on %d GPU%s, %s order, %d runs, %s matmuls\n", "backend", c->n, r->gpus, r->gpus == 1 ? "" : "s",
               o->order == DP_ORDER_PRIORITY ? "priority" : "fifo", r->reps, dp_precision_name(r->precision));
    else if (cli_mpi.on)
        printf("%-16s mpi, %d devices on %d rank%s (one a machine)%s, %s order, %d runs\n", "backend", c->n, cli_mpi.size,
               cli_mpi.size == 1 ? "" : "s", o->mpi_devices && !strcmp(o->mpi_devices, "cuda") ? " on their GPUs" : "",
               o->order == DP_ORDER_PRIORITY ? "priority" : "fifo", r->reps);
    else
        printf("%-16s cpu, %d devices, %s order, %d runs\n", "backend", c->n, o->order == DP_ORDER_PRIORITY ? "priority" : "fifo", r->reps);
    if (cuda) printf("%-16s %s\n", "sharing", r->sharing == DP_SHARING_PARTITIONS ? "partitions" : r->sharing == DP_SHARING_SHARED ? "shared" : "none");
    printf("%-16s %.6g s\n", "wall (median)", r->wall_median);
    printf("%-16s %.6g s  (simulator; error %+.1f%%)\n", "predicted", predicted, predicted > 0 ? 100 * (r->wall_median / predicted - 1) : 0.0);
    printf("%-16s %s\n", "outputs", match < 0 ? "not verified" : match ? "equal to the single-device run" : "DIFFER from the single-device run");
    if (match_cpu >= 0)
        printf("%-16s %s (largest difference %.3g of the tensor's scale, tolerance %g)\n", "", match_cpu ? "within the tolerance of the CPU executor's" : "NOT within the tolerance of the CPU executor's",
               cpu_err, dp_exec_tolerance(r->precision));
    for (int d = 0; d < c->n; d++) printf("device %-3d busy %.6g s  peak %.6g bytes\n", d, r->busy[d], r->peak_bytes[d]);
    if (o->trace_svg) printf("%-16s %s\n", "trace", o->trace_svg);
}
}

/* The inputs of exec: the graph, cluster and placement read, the
   simulator's run (its prediction; a placement over a device's memory is
   refused before anything runs). Under mpirun every rank reads them and
   the ranks agree (mpi_step): a failure on one fails all. */
static int exec_prepare(cli *o, outs *w, dp_graph *g, dp_cluster *c, int **assign, int **one, dp_sim *s)
{
    const char *path = o->pos[0];
    const named outputs[] = {{"--trace-svg", o->trace_svg}};
    const named inputs[] = {{"GRAPH", path}, {"--assign", o->assign}, {"--cluster", o->cluster}};
    dp_error e = {0};
    int rc = outs_check(o, w, outputs, 1, inputs, 3);
    if (!rc && load_input(o, path, g, c)) rc = EXIT_FAIL;
    if (!rc) {
        *assign = malloc(sizeof(int) * (size_t)g->n_ops);
        *one = calloc((size_t)g->n_ops, sizeof(int));
        if (!*assign || !*one) rc = oom();
        else if (read_placement(o->assign, g, c->n, *assign, &e)) rc = fail(&e);
    }
    if (!rc && !strcmp(o->backend, "cpu")) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (cores > 0 && c->n > cores)
            fprintf(stderr, "doppler exec: warning: %d devices on %ld cores; their compute threads will share cores and the wall time will stretch\n", c->n, cores);
    }
    if (!rc && simulate(g, c, *assign, o->order, NULL, s)) rc = EXIT_FAIL;
    return mpi_step(rc);
}

static int cmd_exec(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    if (!o->assign) return usage(o->cmd, "--assign is required");
    int rc = check_backend(o), prec = 0;
    if (rc || (rc = kernel_precision(o, &prec))) return rc;
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_error e = {0};
    dp_exec_result r, r1, rc1;
    dp_exec_opts eo;
    dp_sim s;
    int *assign = NULL, *one = NULL, match = -1, match_cpu = -1, cuda = !strcmp(o->backend, "cuda"), real = 0;
    int mpi = !strcmp(o->backend, "mpi");
    double predicted = 0, cpu_err = -1, *unlimited = NULL;
    dp_exec_fn run = backend_fn(o), run_one = mpi ? dp_exec_cpu : run;   /* the single-device check's */
#ifdef DP_WITH_CUDA
    if (mpi && o->mpi_devices && !strcmp(o->mpi_devices, "cuda")) run_one = dp_exec_cuda;   /* the same sinks' hashes: its digest */
#endif
    outs w;
    memset(&r, 0, sizeof r); memset(&r1, 0, sizeof r1); memset(&rc1, 0, sizeof rc1); memset(&s, 0, sizeof s);
    memset(&w, 0, sizeof w); memset(&c, 0, sizeof c);
    dp_graph_init(&g);
    if (mpi && cli_mpi.rank != 0) o->trace_svg = NULL;   /* rank 0 writes */
    if ((rc = exec_prepare(o, &w, &g, &c, &assign, &one, &s))) goto done;
    rc = EXIT_FAIL;
    for (int v = 0; v < g.n_ops; v++) real |= g.kind[v] != DP_OP_OPAQUE;
    memset(&eo, 0, sizeof eo);
    eo.order = o->order; eo.reps = o->reps ? o->reps : 3; eo.seed = o->seed;
    eo.keep_outputs = cuda && real && !o->no_verify;
    eo.dispatch = o->dispatch;
    eo.precision = (dp_precision)prec;
    eo.link_pacing = o->no_link_pacing ? -1 : 0;
#ifdef DP_WITH_MPI
    if (mpi) eo.mpi = &cli_mpi.mo;
#endif
    if (run(&g, &c, assign, &eo, &r, &e)) { fail(&e); goto done; }
    if (cuda && r.sharing == DP_SHARING_PARTITIONS && r.sms) {   /* once, on stderr */
        fprintf(stderr, "doppler exec: %d logical devices on %d GPU%s: sharing: partitions (green contexts) of", c.n, r.gpus, r.gpus == 1 ? "" : "s");
        for (int d = 0; d < c.n; d++) fprintf(stderr, " %d", r.sms[d]);
        fprintf(stderr, " SMs\n");
    } else if (cuda && r.sharing == DP_SHARING_SHARED) {
        fprintf(stderr, "doppler exec: %d logical devices on %d GPU%s: sharing: shared (no partitions: %s)\n", c.n, r.gpus, r.gpus == 1 ? "" : "s", r.sharing_note);
    }
    if (!o->no_verify && !(mpi && cli_mpi.rank != 0)) {
        /* the single-device run checks outputs, not memory: one device
           need not hold what the placement spreads (unlimited memory);
           under mpirun rank 0 runs it alone, on the CPU executor (on its
           GPU with --mpi-devices cuda) */
        dp_cluster cv = c;
        if (!(cv.memory = unlimited = calloc((size_t)c.n, sizeof(double)))) { oom(); goto done; }
        eo.reps = 1;
        eo.seconds_per_unit = r.seconds_per_unit;
        if (run_one(&g, &cv, one, &eo, &r1, &e)) { fail(&e); goto done; }
        match = r1.digest == r.digest;
        if (eo.keep_outputs) {
            /* the GPU's outputs against the CPU executor's, within the tolerance */
            int worst = -1;
            eo.dispatch = DP_DISPATCH_DYNAMIC;   /* the CPU executor's only one */
            /* in the precision the GPU's matmuls ran in: TF32 and BF16
               inputs rounded as the tensor cores round them, so that the
               outputs differ by the order of FP32 sums (and an ulp of
               expf/tanhf) and the roundings that order moves, not by the
               rounding itself: dp_exec_tolerance's derivation */
            eo.precision = (dp_precision)r.precision;
            if (dp_exec_cpu(&g, &cv, one, &eo, &rc1, &e) || dp_exec_compare(&g, &r, &rc1, &cpu_err, &worst, &e)) { fail(&e); goto done; }
            match_cpu = cpu_err <= dp_exec_tolerance(r.precision);
            if (!match_cpu)
                fprintf(stderr, "doppler exec: the GPU's outputs are %.3g off the CPU executor's at '%s' (tolerance %g, %s matmuls)\n",
                        cpu_err, worst >= 0 ? g.name[worst] : "?", dp_exec_tolerance(r.precision), dp_precision_name(r.precision));
        }
    }
    {
        /* opaque ops run seconds_per_unit per time unit; a graph of real
           ops runs its kernels, and the cluster's units are then seconds
           (a calibrated cluster) */
        int opaque = 0;
        for (int v = 0; v < g.n_ops; v++) opaque |= g.kind[v] == DP_OP_OPAQUE;
        predicted = s.makespan * (opaque ? r.seconds_per_unit : 1.0);
    }
    exec_report x = {path, &c, &r, cuda, match, match_cpu, predicted, cpu_err};
    if (o->trace_svg && exec_trace_svg(o, &w, &x, &g, &s, assign)) goto done;
    exec_print(o, &x);
    rc = match == 0 || match_cpu == 0 ? EXIT_FAIL : EXIT_OK;
done:
    outs_free(&w);
    dp_sim_free(&s);
    dp_exec_result_free(&r); dp_exec_result_free(&r1); dp_exec_result_free(&rc1);
    free(assign); free(one); free(unlimited);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler calibrate
   ---------------------------------------------------------------------- */
/* calibrate --backend cuda: how its logical devices shared the GPUs, from
   the names dp_calibrate_cuda gives them ("cuda3:gpu1", "cuda3:gpu1:sm32"
   for a partition of 32 SMs): "partitions", "shared" or "none". */
static const char *calib_sharing(const dp_cluster *c)
{
    int shared = 0;
    for (int d = 0; d < c->n; d++) {
        int ld = -1, gp = -1;
        if (strstr(c->name[d], ":sm")) return "partitions";
        if (sscanf(c->name[d], "cuda%d:gpu%d", &ld, &gp) == 2 && gp != ld) shared = 1;
    }
    return shared ? "shared" : "none";
}

static int cmd_calibrate(cli *o)
{
    if (o->n_pos != 0) return usage(o->cmd, "takes no positional arguments");
    int rc = check_backend(o);
    if (rc) return rc;
    if (!o->out) return usage(o->cmd, "-o CLUSTER is required");
    dp_calibrate_opts co;
    dp_cluster c;
    dp_error e = {0};
    outs w;
    const named outputs[] = {{"-o", o->out}};
    const char *to;
    int cuda = !strcmp(o->backend, "cuda"), mpi = !strcmp(o->backend, "mpi"), writer = !(mpi && cli_mpi.rank != 0);
    memset(&w, 0, sizeof w);
    memset(&c, 0, sizeof c);
    /* under mpirun rank 0 writes; every rank measures */
    if ((rc = mpi_step(writer ? outs_check(o, &w, outputs, 1, NULL, 0) : 0))) { outs_free(&w); return rc; }
    memset(&co, 0, sizeof co);
    co.devices = o->devices_set ? o->devices : cuda ? 0 : mpi ? 1 : 2;
    co.dispatch = (int)o->dispatch;
    if ((rc = kernel_precision(o, &co.precision))) { outs_free(&w); return rc; }
#ifdef DP_WITH_CUDA
    if (cuda) rc = dp_calibrate_cuda(&c, &co, &e);
#endif
#ifdef DP_WITH_MPI
    if (mpi) rc = dp_calibrate_mpi(&c, &co, &cli_mpi.mo, &e);
#endif
    if (!cuda && !mpi) rc = dp_calibrate_cpu(&c, &co, &e);
    if (rc) { outs_free(&w); return fail(&e); }
    if (cuda && strcmp(calib_sharing(&c), "none"))   /* once, on stderr */
        fprintf(stderr, "doppler calibrate: sharing: %s\n", !strcmp(calib_sharing(&c), "partitions")
                ? "partitions (logical devices on one GPU measured on SMs of their own: see the devices' names)"
                : "shared (logical devices on one GPU share its SMs: no green contexts)");
    if (!writer) { dp_cluster_free(&c); return EXIT_OK; }
    if (!(to = out_name(&w, o->out)) || dp_cluster_write(&c, to, &e) || outs_commit(&w)) {
        rc = to && e.code ? fail(&e) : EXIT_FAIL;
        outs_free(&w);
        dp_cluster_free(&c);
        return rc;
    }
    if (o->json) {
        printf("{\"devices\": %d", c.n);
        json_key_str(stdout, "backend", o->backend);
        json_key_num(stdout, "matmul_flops", c.speed[0]);
        if (mpi) {
            int far = c.n - 1;   /* a device of the last machine */
            printf(", \"machines\": %d", cli_mpi.size);
            json_key_num(stdout, "internode_bandwidth", c.n > 1 ? c.bandwidth[far] : 0.0);
            json_key_num(stdout, "internode_latency", c.n > 1 ? c.latency[far] : 0.0);
        }
        json_key_num(stdout, "bandwidth", c.n > 1 ? c.bandwidth[1] : c.bandwidth[0]);
        json_key_num(stdout, "latency", c.n > 1 ? c.latency[1] : 0.0);
        json_key_num(stdout, "overhead", c.overhead[0]);
        if (cuda) json_key_str(stdout, "sharing", calib_sharing(&c));
        json_key_str(stdout, "out", o->out);
        printf("}\n");
    } else if (mpi) {
        int far = c.n - 1;
        printf("%d %s devices on %d machines (ranks): matmul %.3g FLOP/s, per-op overhead %.3g s; between machines %.3g bytes/s, "
               "hand-off %.3g s; wrote %s\n", c.n, o->mpi_devices && !strcmp(o->mpi_devices, "cuda") ? "CUDA" : "CPU", cli_mpi.size, c.speed[0], c.overhead[0], c.bandwidth[far], c.latency[far], o->out);
    } else {
        printf("%d %s devices: matmul %.3g FLOP/s, per-op overhead %.3g s, copies %.3g bytes/s, hand-off %.3g s; wrote %s\n",
               c.n, cuda ? "CUDA" : "CPU", c.speed[0], c.overhead[0], c.n > 1 ? c.bandwidth[1] : c.bandwidth[0], c.n > 1 ? c.latency[1] : 0.0, o->out);
    }
    dp_cluster_free(&c);
    return EXIT_OK;
}

/* ----------------------------------------------------------------------
   main
   ---------------------------------------------------------------------- */
typedef struct command {
    const char *name;
    int (*run)(cli *);
    const char *options;
    const char **help;
} command;

static const command commands[] = {
    {"info", cmd_info, "devices cluster precision machines internode memory format json", &help_info},
    {"place", cmd_place,
     "method policy samples threads improve op-logits op-prior op-restart polish from devices cluster precision machines internode memory format seed order budget time-limit start progress out gantt no-transfers json",
     &help_place},
    {"sim", cmd_sim, "assign devices cluster precision machines internode memory format order gantt no-transfers json", &help_sim},
    {"bench", cmd_bench, "methods policy samples from devices cluster precision machines internode memory format seed order budget time-limit progress json md",
     &help_bench},
    {"train", cmd_train,
     "algo from init devices cluster precision machines internode memory memory-ratio format stages episodes lr hidden layers shared-gnn insertion entropy order seed "
     "rollouts temperature greedy-baseline self-imitation adv-norm ppo ppo-clip critic critic-lr op-logits op-prior op-restart reinforce tau step-baseline anchor anchor-rate select time-limit progress out out-assign curve curve-svg json backend reps dispatch mpi-timeout mpi-devices",
     &help_train},
    {"convert", cmd_convert, "to format", &help_convert},
    {"gen", cmd_gen, "nodes width density regularity jump ccr seed out parts dim batch layers vocab weights", &help_gen},
    {"exec", cmd_exec, "assign backend devices cluster precision machines internode memory format reps order dispatch trace-svg json no-verify no-link-pacing seed mpi-timeout mpi-devices", &help_exec},
    {"calibrate", cmd_calibrate, "backend devices dispatch precision out json mpi-timeout mpi-devices", &help_calibrate},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

/* Options the command accepts but the chosen method, shape or stage does
   not read: a usage error naming the option, not a silent no-op. (--seed
   stays accepted by every place method: scripts pass one seed to all.) */
static int given(const cli *o, const char *name) { return has_word(o->given, name); }

static int check_applies(const cli *o)
{
    static const char *const dag_opts[] = {"nodes", "width", "density", "regularity", "jump", "ccr", "seed"};
    static const char *const wl_opts[] = {"parts", "dim", "batch", "layers"};   /* --weights, --vocab: gen says */
    const char *cmd = o->cmd;
    int m = 0, k;
    if (o->no_transfers && !o->gantt) return usage(cmd, "--no-transfers applies to the chart of --gantt F.svg");
    if (o->mpi_timeout && !(o->backend && !strcmp(o->backend, "mpi"))) return usage(cmd, "--mpi-timeout applies to --backend mpi");
    if (o->mpi_devices && !(o->backend && !strcmp(o->backend, "mpi"))) return usage(cmd, "--mpi-devices applies to --backend mpi");
    if (o->mpi_devices && strcmp(o->mpi_devices, "cpu") && strcmp(o->mpi_devices, "cuda"))
        return usage(cmd, "--mpi-devices '%s': expected cpu or cuda", o->mpi_devices);
    if (!strcmp(cmd, "place") && o->method && !parse_method(o->method, &m)) {   /* else place says */
        int search = m == DP_METHOD_ANNEAL || m == DP_METHOD_ENUMOPT;
        /* a learned placer searches with samples (the pretrained policy
           draws 64 unless --samples says), --improve or --polish */
        int sampled = o->samples_set ? o->samples > 0 : m == METHOD_DOPPLER && !o->policy;
        int learned_search = LEARNED(m) && (o->improve || o->polish || sampled);
        if (o->budget && m != DP_METHOD_ANNEAL)
            return usage(cmd, "--budget applies to --method anneal (its simulations), not to %s", method_name(m));
        if (o->threads && !(m == METHOD_DOPPLER && sampled))
            return usage(cmd, "--threads applies to --method doppler's samples (--samples K > 0; the pretrained policy draws 64)");
        if (o->start && !search && !LEARNED(m))
            return usage(cmd, "--start applies to --method enumopt and anneal (their first placement), not to %s", method_name(m));
        if ((o->time_limit || o->progress) && !search && !learned_search) {
            const char *opt = o->time_limit ? "--time-limit" : "--progress";
            if (LEARNED(m))
                return usage(cmd, "%s applies to %s's samples, --improve and --polish (the searches), not to a greedy placement", opt, method_name(m));
            return usage(cmd, "%s applies to --method anneal, enumopt, doppler and placeto (the searches), not to %s", opt, method_name(m));
        }
    }
    if (!strcmp(cmd, "bench") && o->methods && strcmp(o->methods, "all") && (o->budget || o->progress || o->time_limit)) {
        char buf[512];
        int anneal = 0, search = 0;
        snprintf(buf, sizeof buf, "%s", o->methods);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
            if (!parse_method(tok, &m)) {
                anneal |= m == DP_METHOD_ANNEAL;
                search |= m == DP_METHOD_ANNEAL || m == DP_METHOD_ENUMOPT || LEARNED(m);
            }
        if (o->budget && !anneal) return usage(cmd, "--budget applies to method anneal, which --methods %s leaves out", o->methods);
        if (o->progress && !search)
            return usage(cmd, "--progress applies to methods anneal, enumopt, doppler and placeto, which --methods %s leaves out", o->methods);
        if (o->time_limit && !search)
            return usage(cmd, "--time-limit applies to methods anneal, enumopt, doppler and placeto, which --methods %s leaves out", o->methods);
    }
    if (!strcmp(cmd, "gen") && o->n_pos == 1) {
        const char *shape = o->pos[0];
        int dag = !strcmp(shape, "layered") || !strcmp(shape, "random");
        dp_workload wk;
        if (!dag && dp_workload_parse(shape, &wk)) return 0;   /* gen says */
        for (k = 0; k < (int)(sizeof dag_opts / sizeof *dag_opts); k++)
            if (!dag && given(o, dag_opts[k]))
                return usage(cmd, "--%s applies to the random DAGs (layered, random), not to the workload %s", dag_opts[k], shape);
        for (k = 0; k < (int)(sizeof wl_opts / sizeof *wl_opts); k++)
            if (dag && given(o, wl_opts[k]))
                return usage(cmd, "--%s applies to the workloads (chainmm, ffnn, llama-block, llama-layer, gpt), not to %s", wl_opts[k], shape);
        if (given(o, "jump") && strcmp(shape, "random"))
            return usage(cmd, "--jump applies to random (a layered graph's edges span one level)");
        if (!dag && given(o, "batch") && wk == DP_WL_CHAINMM)
            return usage(cmd, "--batch applies to ffnn, llama-block, llama-layer and gpt, not to chainmm (its matrices are D x D)");
        if (!dag && given(o, "layers") && wk == DP_WL_LLAMA_BLOCK)
            return usage(cmd, "--layers applies to chainmm, ffnn, llama-layer and gpt, not to llama-block (one block; llama-layer stacks L)");
    }
    if (!strcmp(cmd, "train")) {
        if (o->reps && !o->backend) return usage(cmd, "--reps applies to stage real with --backend cpu|cuda");
        if (o->backend && !(o->stages && strstr(o->stages, "real")))
            return usage(cmd, "--backend applies to stage real (--stages ...,real)");
    }
    return 0;
}

static const command *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(help_main, stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2 && !strcmp(argv[2], "help")) {
            fputs(help_help, stdout);
        } else if (argc > 2) {
            const command *c = find_command(argv[2]);
            if (!c) return usage(NULL, "unknown command '%s'", argv[2]);
            fputs(*c->help, stdout);
        } else {
            fputs(help_main, stdout);
        }
        return EXIT_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("doppler %s\n", DP_VERSION);
        return EXIT_OK;
    }
    const command *c = find_command(name);
    if (!c) return usage(NULL, "unknown command '%s'", name);
#ifdef DP_WITH_MPI
    /* --backend mpi: under mpirun, one process a machine (see mpi_step) */
    for (int i = 2; i + 1 < argc && !cli_mpi.on; i++) cli_mpi.on = !strcmp(argv[i], "--backend") && !strcmp(argv[i + 1], "mpi");
    if (cli_mpi.on) {
        int provided = 0;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            fprintf(stderr, "doppler %s: MPI_Init_thread failed\n", name);
            return EXIT_FAIL;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &cli_mpi.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &cli_mpi.size);
        if (cli_mpi.rank != 0 && !freopen("/dev/null", "w", stdout)) {
            fprintf(stderr, "doppler %s: rank %d: cannot quiet standard output\n", name, cli_mpi.rank);
            MPI_Abort(MPI_COMM_WORLD, EXIT_FAIL);
        }
    }
#endif
    cli o;
    memset(&o, 0, sizeof o);
    o.cmd = c->name;
    o.pos = calloc((size_t)argc, sizeof *o.pos);
    if (!o.pos) return EXIT_FAIL;
    o.seed = 1;
    o.gen.seed = 1;
    int rc = parse_args(&o, argc, argv, 2, c->options, *c->help);
#ifdef DP_WITH_MPI
    cli_mpi.mo.timeout = o.mpi_timeout;   /* 0: the library's defaults */
    cli_mpi.mo.devices = o.mpi_devices && !strcmp(o.mpi_devices, "cuda") ? DP_MPI_CUDA : DP_MPI_CPU;
#endif
    if (rc == 0 && (o.machines != NULL) != (o.internode != NULL))
        rc = usage(o.cmd, "--machines K and --internode BANDWIDTH[,LATENCY] go together");
    else if (rc == 0 && o.machines && (atoi(o.machines) < 1 || strspn(o.machines, "0123456789") != strlen(o.machines)))
        rc = usage(o.cmd, "--machines '%s': expected a count of machines (nodes)", o.machines);
    else if (rc == 0 && o.internode && parse_internode(o.internode, &o.internode_bw, &o.internode_lat))
        rc = usage(o.cmd, "--internode '%s': expected BANDWIDTH[,LATENCY], numbers", o.internode);
    /* exec and calibrate: --precision is the kernels' too (kernel_precision) */
    int kernels = !strcmp(o.cmd, "exec") || !strcmp(o.cmd, "calibrate");
    if (rc == 0 && o.precision && !kernels && (!o.cluster || !is_preset_name(o.cluster)))
        rc = usage(o.cmd, "--precision %s applies to a GPU preset given with --cluster (h100-sxm:N, ...)%s%s%s",
                   o.precision, o.cluster ? ", not to the cluster file '" : "", o.cluster ? o.cluster : "", o.cluster ? "'" : "");
    if (rc == 0) rc = check_applies(&o);
    if (rc < 0) rc = EXIT_OK;   /* --help */
    else if (rc == 0) rc = c->run(&o);
    free(o.pos);
#ifdef DP_WITH_MPI
    if (cli_mpi.on) {
        if (cli_mpi.lost) MPI_Abort(MPI_COMM_WORLD, rc ? rc : EXIT_FAIL);   /* Finalize could wait for the lost rank */
        MPI_Finalize();
    }
#endif
    return rc;
}
