/* doppler.h - learned device placement for dataflow graphs.       v0.1.0
   A single-file C library in the stb style. In ONE C or C++ file write

       #define DOPPLER_IMPLEMENTATION
       #include "doppler.h"

   and include it without the define everywhere else. The implementation
   needs the C standard library and POSIX threads (link with -lm -pthread):

       cc -std=gnu11 -O2 -o prog prog.c -lm -pthread

   the header part needs nothing but the C standard library. See LINKAGE
   for linking doppler into a program that has its own stb_ds, and for
   DOPPLER_STATIC.

   WHAT IT DOES
   Given a dataflow graph (a DAG of ops, each with a compute cost, each edge
   carrying a tensor) and a cluster of devices, it chooses a device for
   every op so that the graph finishes early on a work-conserving,
   asynchronous runtime. It has the graph model and formats, a cluster and
   cost model, a discrete-event simulator of that runtime, a lower bound,
   heuristic placers, the DOPPLER learned placer (SEL and PLC policies,
   imitation then REINFORCE, policy files) and Placeto (the paper's
   learned baseline), a threaded CPU executor that runs a placed graph for
   real (float32 kernels for real ops, busy kernels of their modelled time
   for opaque ones) with calibration of the simulator against it, the
   runtime model's dispatcher for other executors, and SVG Gantt charts and
   training curves. Its CUDA
   companion, doppler_cuda.cu (>>api-cuda), runs placed graphs on GPUs with
   the same dispatcher: logical devices on streams, peer copies, events.
   With DP_WITH_MPI (>>api-mpi) a placed graph runs across machines, one
   MPI process each, its cross-machine edges MPI messages, and DOPPLER's
   stage real trains on that run; a cluster's devices belong to machines
   (nodes) whose links cost what they say.
   Placement is memory-true: ops hold resident bytes and shared weights
   (held once on every device that uses them), every placer keeps each
   device within its memory (DOPPLER's PLC masks the devices an op no
   longer fits) or names the op that fits nowhere, and every method
   returns the best single device when that does better (see THE RUNTIME
   MODEL and >>api-placers). Ops keep the names they had in the model they
   came from (ONNX node names, any bytes), and a placement can be written
   keyed by them (dp_mapping_write) to go back to that model; clusters of
   real GPUs (H100, H200, A100; NVLink or PCIe) come as presets at a
   chosen precision (>>api-cluster).

   WHAT IT DOES NOT DO (YET)
   - run the CUDA executor on several physical GPUs: it has run on one
     H100 and one H200 (bench/RESULTS.md part 6: tests/test_cuda.c and
     compute-sanitizer clean); without a GPU its GPU tests skip, its
     dispatcher and its kernels' arithmetic are tested on the host;
   - show on a GPU what its newest parts do: the green-context partitions
     of logical devices sharing a GPU (their one GPU run fell back to
     sharing on a driver-version request since fixed), the calibration's
     speed curves and the second tensor-core matmul (dp__k_mma2, the
     default, emulated on the host bit for bit) have not run on a GPU;
   - run GPUs on the MPI executor on a GPU: the path is written (each
     rank's devices on its GPUs with the CUDA executor's hooks, GPU
     tensors through CUDA-aware MPI or pinned staging, dp_mpi_opts.devices)
     but has run only without a GPU, where every rank fails cleanly; its
     GPU checks (tests/test_mpi.c) skip until run on GPUs. The MPI
     executor has run on one machine only (ranks on localhost), not
     across machines, where two
     ranks on 2 cores ran 5-37% (a round's median) slower than predicted:
     MPI moves a message when a rank polls, and a rank polls rarely while
     its devices compute (bench/RESULTS.md part 11);
   - model a CPU shared with other processes: dp_calibrate_cpu measures
     kernels in CPU time, and the executor's wall time grows with the
     load the simulator does not see (dp_calibrate_cpu_speed re-measures
     a drifting machine's speed cheaply, not other processes' load);
   - model transfer contention beyond "one transfer at a time per link";
   - bound memory tighter than the static total (every output held to the
     end of the run) when placing, recompute, offload to host memory or
     stream weights between devices; give PLC a memory input (its mask
     keeps it within memory; it sees no memory pressure coming);
   - learn a policy that beats every heuristic on every reference graph
     at every seed (anneal given as many simulations): bench/RESULTS.md,
     part 4, has the counts; the pretrained policy the CLI carries
     (policies/doppler_family.dpl, loadable with dp_policy_load) places
     unseen graphs at or below cp and heft on 27 of 30 (part 4), 0.7%
     better than annealing on average but up to 16% behind it on one.

   CONTENTS (grep for the anchor, e.g. ">>simulator")
     public API
       >>api-errors      dp_error, dp_code: every failure returns one
       >>api-graph       dp_graph, op kinds and a real op's FLOPs
                         (dp_op_flops), building a graph
       >>api-formats     reading and writing graphs (native text, DOPPLER,
                         STG, binary .dpb) and assignments, dp_write_file
       >>api-cluster     dp_cluster, the cost model, measuring this machine
                         into a cluster (dp_calibrate_cpu, _cpu_speed)
       >>api-simulator   dp_sim: the work-conserving discrete-event simulator
       >>api-analysis    b-level, t-level, lower bound, statistics, memory
       >>api-placers     heuristic placers: single .. anneal
       >>api-gantt       SVG Gantt chart
       >>api-gen         generated graphs: random DAG families (DAGGEN
                         style), ML workloads of real ops (dp_gen_workload)
       >>api-learn       DOPPLER and Placeto: policies, training, placing
                         with a policy, policy files, training curves
       >>api-exec        executors: options, results, the CPU executor,
                         comparing outputs, buffer sizes and input values,
                         the dispatcher, checking real ops' shapes
       >>api-cuda        the CUDA companion's C ABI (doppler_cuda.cu): the CUDA executor
       >>api-mpi         with DP_WITH_MPI: the MPI executor (one process per
                         machine), stage real across them, calibration
       >>api-util        dp_rng (xoshiro256**), dp_now
       >>internal        not API: dp__ functions shared with doppler_cuda.cu
                         and the tests
     implementation (under DOPPLER_IMPLEMENTATION), in data-flow order
       >>util            errors, rng, clock, file slurping, text scanning
       >>graph           building, validating, CSR adjacency, topo order
       >>formats         native, DOPPLER reference, STG, binary (.dpb);
                         assignments
       >>cluster         presets, cluster file, cost model
       >>runtime         the runtime model's state machine (dp__rt): ready
                         queues, running ops, links, references, memory
       >>simulator       dp__rt driven by simulated time (dp_sim_run)
       >>analysis        levels, lower bound, statistics
       >>placers         single, round-robin, random, cp, heft, enumopt, anneal
       >>gantt           SVG writer
       >>gen             layered and random DAG generators
       >>features        dense kernels, per-op features, critical paths, the
                         per-graph workspace
       >>gnn             message passing, forward and backward
       >>episode         one SEL/PLC rollout and its backward pass
       >>placeto         Placeto: progressive embedding, head, one sweep
       >>train           Adam, the three stages, rollouts, greedy/sampled placement
       >>checkpoint      policy files
       >>curves          training-curve SVG
       >>kernels         reference CPU semantics of every op kind, their
                         FLOPs (dp_op_flops), input values
       >>workloads       block-partitioned chainmm, ffnn and llama graphs
       >>dispatch        dp__rt driven by an executor's hooks: the
                         dispatcher (dp__rt_loop, dp_dispatch)
       >>exec            the threaded CPU executor, on the dispatcher's hooks
       >>calibrate       measuring the CPU into a cluster file
       >>mpi             (DP_WITH_MPI) the MPI executor: the dispatcher on
                         every rank, messages for cross-node edges,
                         agreement, heartbeats; stage real across ranks;
                         measuring the links between ranks

   HOW TO READ THIS FILE (to learn DOPPLER, in the order the data flows)
     1. >>graph      a dp_graph: ops, edges, CSR adjacency and topological
                     order (dp_graph_finalize); >>cluster: dp_op_time and
                     dp_xfer_time, the cost model.
     2. >>runtime    dp__rt: the runtime model (work-conserving devices,
                     FIFO or priority; see THE RUNTIME MODEL below) as
                     one state machine, which the executors dispatch by;
                     >>simulator: dp_sim_run, the same machine on
                     simulated time, the runtime a placement is scored
                     on. >>placers: the heuristics to beat, cp and heft
                     first.
     3. >>features   dp__gctx_init: per graph, once, the op features
                     (z-scored costs, levels, critical paths), the cp
                     expert's levels and every buffer an episode needs.
     4. >>gnn        dp__forward: message passing over the graph
                     (dp__mp_forward), the op embeddings and SEL's static
                     scores.
     5. >>episode    dp__rollout: one episode, step by step: SEL picks a
                     legal op (softmax over its scores), PLC its device
                     from the partial schedule (dp__plc_features), the op
                     is placed (dp__place_step); dp__backward: the
                     gradients of the episode's loss.
     6. >>train      dp_train: stages il (imitating the cp expert), sim
                     and real (REINFORCE) in dp__train_stage; each group
                     of episodes is rolled out (dp__group_rollouts), gets
                     its returns against the baselines (dp__group_returns),
                     its gradients (dp__group_backward) and an Adam step
                     (dp__group_update). dp_policy_place: the trained
                     policy placing a graph (greedy, or best of samples).

   CONVENTIONS
   - Public names dp_, private dp__, macros DP_.
   - Functions that can fail return 0 (DP_OK) or a dp_code and fill the
     dp_error given to them (which may be NULL). A message about a file
     names the file, the line and the value at fault:
         "g.dpg:12: op 'mm3': compute cost '-4' is negative"
     The library never calls exit() or abort(), and never prints.
     Codes: PARSE unreadable text (syntax, not a number, unknown record,
     field or kind, truncated file); RANGE a readable value out of range
     (negative, NaN or inf, integer overflow, device index) or a sum of
     costs that is not finite (total compute, times: dp_check); GRAPH a
     structural fault (unknown op, self loop, duplicate op name or edge);
     CYCLE; LIMIT past a DP_MAX_* limit (checked before allocating); IO;
     NOMEM; FORMAT a graph the target format cannot hold; INFEASIBLE no
     placement fits the memory; DEVICE a CUDA failure; ARG API misuse.
   - Options pointers may be NULL (all defaults). After a failed read the
     graph or cluster is empty and dp_graph_free / dp_cluster_free on it is
     safe; an assignment is written only when a placer succeeds.
   - Allocation: define DP_MALLOC, DP_REALLOC and DP_FREE (and optionally
     DP_CALLOC) before the implementation to use your own allocator; every
     allocation goes through them, the executor threads' included (so
     they must be thread-safe). A failed allocation anywhere
     returns DP_ERR_NOMEM with a message and leaks nothing; no output file
     is left behind (tests/test_alloc.c fails every allocation in turn).
     What the library allocates (a result's arrays, a graph's) is its
     allocator's: free it with the library's functions (dp_graph_free,
     dp_exec_result_free, ...), never with free(): the default allocator
     (see DP_MALLOC in the implementation) is not malloc's on Linux.
   - Descriptor structs are zero-means-default: {0} gives sensible values.
   - Deterministic: every random choice comes from a dp_rng seeded by you.
     There is no global mutable state; separate objects may be used from
     separate threads.
   - Files are written to "PATH.tmp" and renamed on success, so a failure
     never leaves a partial output file behind; a symbolic link is written
     through (the rule applied to its target), a device or a FIFO
     (/dev/null, /dev/stdout) in place, never replaced (dp_write_file);
     dp_outputs puts several outputs in place together, or none.

   LINKAGE
   - DPDEF marks every public function: extern by default. Define
     DOPPLER_STATIC with DOPPLER_IMPLEMENTATION, before the first include
     of doppler.h in that file, to make them all static: the library is
     then private to that translation unit, and several translation units
     of one program may each compile their own copy (tests/test_static.c).
     Or define DPDEF yourself (a visibility attribute, say). The CUDA
     companion (>>api-cuda) is always extern and needs the extern library:
     DOPPLER_STATIC does not apply to it.
   - doppler.h neither includes nor compiles stb_ds (nor any other
     library): its growable arrays and its index of names are its own, so
     that every growth can fail with DP_ERR_NOMEM (stb_ds's arrput cannot).
     A program that uses stb_ds compiles its implementation itself, as
     stb_ds says (STB_DS_IMPLEMENTATION in one file), with or without
     doppler's in that file, and its STBDS_REALLOC/STBDS_FREE are its own:
     doppler's allocations never go through them, stb_ds's never through
     DP_MALLOC (tests/test_stb_ds.c).
   - DOPPLER_IMPLEMENTATION_DONE defined before the include (e.g.
     -DDOPPLER_IMPLEMENTATION_DONE) skips the implementation even where
     DOPPLER_IMPLEMENTATION is defined: a program whose file defines it can
     be linked to an implementation compiled once elsewhere (build.sh does:
     build/doppler.o).
   - Under C++ every declaration has C linkage (extern "C"); the
     implementation compiles as C (-std=gnu11; not -std=c11: it uses POSIX
     calls) and as C++.

   LIMITS (past one: DP_ERR_LIMIT, checked before anything is sized by it)
     DP_MAX_OPS      2^22 ops in a graph (STG: tasks plus the entry and exit
                     tasks; DOPPLER files: a node count of at most twice it)
     DP_MAX_EDGES    2^25 edges in a graph (and integers in one DOPPLER list)
     DP_MAX_DEVICES  256 devices in a cluster, per-device time columns,
                     Placeto's device count
     DP_MAX_FILE_BYTES  1 GiB in one input file or buffer (a regular file's
                     size is checked before it is read)
     DP_MAX_NAME     127 bytes in an op name
     DP_MAX_HIDDEN 512, DP_MAX_LAYERS 64: a policy's hidden size and rounds
     A file that declares more (10^12 nodes, 10^5 devices, a hidden size of
     10^9) is refused, not allocated; graphs grow with what a file holds,
     never with what it declares.

   FAILURES
     A failed allocation anywhere (graph building, readers, simulator,
     placers, learning buffers, checkpoints, the executor and its threads,
     calibration) and a failed pthread_create return DP_ERR_NOMEM with a
     message (but for dp_infer_opts.threads, whose samples the threads
     that did start draw); the call frees what it made and writes no
     output file.
     dp_train stops on a cost, loss or gradient that is NaN or infinite
     with DP_ERR_RANGE naming the stage, episode and graph, before that
     episode's update: the policy is as after the last good episode.
     Costs near the largest double: a graph (dp_graph_finalize, so every
     reader) or a graph and cluster (dp_check) whose total compute or
     times add up to inf is refused with DP_ERR_RANGE naming the file (for
     a reader) and the op where the sum first overflows; no result is ever
     inf or NaN.

   THE RUNTIME MODEL (what dp_sim computes and the executors dispatch by;
   see >>runtime)
   - Op v on device d takes dev_time[v][d] when the graph gives one,
     otherwise overhead[d] + compute[v] / s, where s is speed[d] unless
     the cluster gives op v's kind a speed on d: a single one, or a curve
     of speeds by work (see >>api-cluster; dp_calibrate_cpu measures them;
     overhead is 0 unless the cluster says otherwise).
   - An edge u->v with u, v on the same device costs nothing; across
     devices a to b it is a transfer of bytes(u->v) taking
     latency[a][b] + bytes / bandwidth[a][b], started when u ends.
     Link model FREE: transfers never contend (the DOPPLER reference).
     SERIAL: each ordered device pair (a, b) carries one transfer at a
     time, in the order they were issued (ties by edge index).
   - An op is ready when all its inputs have arrived. Each device runs one
     op at a time and never idles while one of its ops is ready. Among its
     ready ops it takes the earliest-ready (FIFO; ties by lower op index)
     or the highest-priority (PRIORITY; ties by ready time, then index).
   - All events at a time t (completions, arrivals) are applied before any
     device picks its next op at t.
   - Memory: an op's output (out_bytes) is allocated on its device when it
     starts and freed when every consumer has finished with it (local
     consumers finished, copies to other devices done); outputs of sinks
     stay. Its workspace (mem_bytes) lives while it runs. A copy's buffer
     (edge bytes) is allocated on the destination when the copy is issued
     and freed when its consumer finishes. Frees at time t come before
     allocations at t. Resident bytes are held from before the run starts
     to its end: each op's own (resident) on its device, and each weight
     once on every device that runs an op using it (a parameter shared by
     ops on several devices is replicated on each, as data-parallel and
     tensor-parallel runtimes do; it is never moved at run time).
     Placers keep the static total within each device's memory: every
     buffer above counted for the whole run (dp_static_memory), an upper
     bound of the runtime's peak, so a placement they return never runs
     out. Not modelled: recomputation, offloading to host memory, weights
     streamed between devices.

   LICENSE: MIT, see the end of the file.
*/
#ifndef DOPPLER_H
#define DOPPLER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#ifdef DP_WITH_MPI
/* MPI's C API only: no C++ bindings (deprecated, and warning under -Wextra) */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>   /* outside extern "C": see >>api-mpi */
#if defined(DP_WITH_CUDA) && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>   /* MPIX_Query_cuda_support, where Open MPI has it */
#endif
#endif

/* DPDEF: the linkage of every public function (see LINKAGE above). */
#ifndef DPDEF
#ifdef DOPPLER_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define DPDEF static __attribute__((unused))   /* a program need not call them all */
#else
#define DPDEF static
#endif
#else
#define DPDEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DP_VERSION "0.1.0"

/* Limits, enforced with a clear error before any large allocation. */
#define DP_MAX_OPS        (1 << 22)          /* ops in one graph          */
#define DP_MAX_EDGES      (1 << 25)          /* edges in one graph        */
#define DP_MAX_DEVICES    256                /* devices in one cluster    */
#define DP_MAX_NAME       127                /* bytes in an op name       */
#define DP_MAX_FILE_BYTES ((size_t)1 << 30)  /* bytes in one input file   */
#define DP_MAX_LAYERS     64                 /* message-passing rounds    */

/* ======================================================================
   >>api-errors
   ====================================================================== */
#define DP_CODES(X)                                                  \
    X(DP_OK,             "ok")                                       \
    X(DP_ERR_ARG,        "bad argument")                             \
    X(DP_ERR_IO,         "i/o error")                                \
    X(DP_ERR_PARSE,      "parse error")                              \
    X(DP_ERR_GRAPH,      "invalid graph")                            \
    X(DP_ERR_CYCLE,      "graph has a cycle")                        \
    X(DP_ERR_RANGE,      "value out of range")                       \
    X(DP_ERR_NOMEM,      "out of memory")                            \
    X(DP_ERR_LIMIT,      "limit exceeded")                           \
    X(DP_ERR_INFEASIBLE, "no feasible placement")                    \
    X(DP_ERR_FORMAT,     "graph not representable in that format")    \
    X(DP_ERR_DEVICE,     "device or driver failure")                 \
    X(DP_ERR_PEER,       "another process failed or stopped answering")

#define DP__CODE_ENUM(id, text) id,
typedef enum dp_code { DP_CODES(DP__CODE_ENUM) DP_CODE__COUNT } dp_code;
#undef DP__CODE_ENUM

typedef struct dp_error {
    dp_code code;       /* DP_OK when nothing failed                     */
    char    msg[512];   /* "file:line: what, naming the value at fault"  */
} dp_error;

DPDEF const char *dp_code_text(dp_code code);   /* "parse error", ...          */

/* ======================================================================
   >>api-graph
   A graph is built op by op and edge by edge, then finalised (validated,
   adjacency and topological order computed). After dp_graph_finalize the
   arrays below are read-only and stay valid until dp_graph_free.
   ====================================================================== */
#define DP_KINDS(X)                                                    \
    X(OPAQUE, "opaque")  /* cost only: DOPPLER files, STG, generated */ \
    X(INPUT, "input")    X(MATMUL, "matmul")   X(ADD, "add")           \
    X(MUL, "mul")        X(SCALE, "scale")     X(RELU, "relu")         \
    X(GELU, "gelu")      X(SILU, "silu")       X(SOFTMAX, "softmax")   \
    X(RMSNORM, "rmsnorm") X(LAYERNORM, "layernorm")                    \
    X(REDUCE, "reduce")  X(CONCAT, "concat")   X(SPLIT, "split")       \
    X(TRANSPOSE, "transpose") X(COPY, "copy")

#define DP__KIND_ENUM(id, text) DP_OP_##id,
typedef enum dp_kind { DP_KINDS(DP__KIND_ENUM) DP_KIND__COUNT } dp_kind;
#undef DP__KIND_ENUM

DPDEF const char *dp_kind_name(dp_kind kind);                 /* "matmul"      */
DPDEF int         dp_kind_parse(const char *name, dp_kind *out); /* 0 if known */

/* The FLOPs a real op of kind `kind` with a rows x cols output counts, as
   the workloads set compute and dp_calibrate_cpu measures speeds (a graph
   of real ops built by hand should use it too, so that a calibrated
   cluster predicts it): matmul 2 rows inner cols (inner: the shared
   dimension); add and reduce (inputs - 1) rows cols; silu and rmsnorm
   4 rows cols; softmax and layernorm 5 rows cols; gelu 8 rows cols; every
   other kind (input, mul, scale, relu, concat, split, transpose, copy)
   rows cols; opaque 0. */
DPDEF double dp_op_flops(dp_kind kind, int rows, int cols, int inner, int inputs);

typedef enum dp_format {
    DP_FORMAT_AUTO = 0,  /* detect from the content (reading) or the name */
    DP_FORMAT_NATIVE,    /* doppler-graph text, see >>formats             */
    DP_FORMAT_DOPPLER,   /* the DOPPLER reference's compute_graph files   */
    DP_FORMAT_STG,       /* Standard Task Graph set (Kasahara lab)        */
    DP_FORMAT_BINARY     /* doppler's binary graph (".dpb"), see >>api-formats */
} dp_format;

typedef struct dp_graph {
    int n_ops, n_edges;
    /* per op, index 0..n_ops-1 (the file's node order) */
    char   **name;       /* unique, no spaces                             */
    char   **source;     /* names the op had in the model it came from
                            (ONNX nodes; a merged op's members): NULL, or
                            n_source[v] strings back to back, each ended by
                            its NUL (dp_graph_source gives the i-th)      */
    int     *n_source;
    dp_kind *kind;
    double  *compute;    /* FLOPs or abstract units, >= 0                 */
    double  *out_bytes;  /* size of the op's output tensor               */
    double  *mem_bytes;  /* workspace while it runs (0 = none)           */
    double  *resident;   /* bytes held on its device for the whole run:
                            its own weights or parameters (0 = none)      */
    int     *rows, *cols;/* output tensor shape of real ops (0 for opaque)  */
    int     *arg;        /* op parameter (split: the column block)         */
    int      n_dev_time; /* columns of dev_time (0 = no overrides)        */
    double  *dev_time;   /* [n_ops * n_dev_time]; < 0 = use compute/speed */
    /* per edge, in the order added */
    int    *src, *dst;
    double *bytes;       /* tensor bytes carried                          */
    /* weights: named resident tensors that ops use (parameters shared by
       several ops). A weight is held, for the whole run, once on every
       device that runs an op using it (shared weights are replicated) */
    int     n_weights, n_uses;
    char  **weight_name;   /* [n_weights] unique among weights           */
    double *weight_bytes;  /* [n_weights]                                */
    int    *use_op, *use_weight; /* [n_uses] (op, weight) pairs, as added */
    int    *wuse_off, *wuse;  /* after finalize: op v uses weights
                                 wuse[wuse_off[v] .. wuse_off[v + 1])     */
    int    *wop_off, *wop;    /* after finalize: weight w is used by ops
                                 wop[wop_off[w] .. wop_off[w + 1])         */
    /* adjacency (CSR): edges leaving v are out_edge[out_off[v]..out_off[v+1]) */
    int *out_off, *out_edge, *in_off, *in_edge;
    int *topo;           /* ops in topological order (ties: lower index)  */
    /* the units this graph's costs are in, used by dp_cluster_for_graph */
    double unit_speed;     /* compute per time unit of a default device   */
    double unit_bandwidth; /* bytes per time unit of a default link       */
    int    n_ext_inputs;   /* DOPPLER format: external input tensors      */
    dp_format format;      /* the format it was read from                 */
    int    finalized;
    void  *dp__names;      /* private: name -> id index                   */
    void  *dp__pool;       /* private: the blocks that hold the op names  */
    void  *dp__edges;      /* private: (src, dst) set while building      */
    void  *dp__wnames;     /* private: weight name -> id index            */
    int    dp__numbered;   /* private: op i is named "op<i>", every one (a
                              DOPPLER file's ops): no name index, a name is
                              found by its number                          */
} dp_graph;

typedef struct dp_op_desc {
    const char *name;        /* NULL -> "op<index>"                        */
    dp_kind     kind;        /* 0 = DP_OP_OPAQUE                            */
    double      compute, out_bytes, mem_bytes;
    double      resident;    /* bytes held on its device all run (weights) */
    int         rows, cols, arg; /* real ops: output shape (float32), parameter */
    const double *dev_time;  /* optional per-device times, n_dev_time of them */
    int          n_dev_time;
    const char *const *source; /* optional: the names the op had in the model it
                                  came from, n_source of them, each non-empty
                                  (any bytes but NUL), kept exactly */
    int          n_source;
} dp_op_desc;

DPDEF void dp_graph_init(dp_graph *g);           /* empty graph, units 1 and 1 */
DPDEF int  dp_graph_add_op(dp_graph *g, const dp_op_desc *op, int *id, dp_error *err);
DPDEF int  dp_graph_add_edge(dp_graph *g, int src, int dst, double bytes, dp_error *err);
DPDEF int  dp_graph_find(const dp_graph *g, const char *name);   /* id or -1 */
/* The i-th source name of op v (0 <= i < g->n_source[v]), NULL past them. */
DPDEF const char *dp_graph_source(const dp_graph *g, int v, int i);
/* A weight (a resident tensor of `bytes` bytes, name as an op's, unique
   among weights) and the ops that use it, before dp_graph_finalize; an op
   uses a weight at most once. A weight no op uses is held nowhere. */
DPDEF int  dp_graph_add_weight(dp_graph *g, const char *name, double bytes, int *id, dp_error *err);
DPDEF int  dp_graph_use_weight(dp_graph *g, int op, int weight, dp_error *err);
DPDEF int  dp_graph_find_weight(const dp_graph *g, const char *name);   /* id or -1 */
/* Validates (cycles, naming an op on one), builds adjacency and topo.
   Refuses with DP_ERR_RANGE, naming the op or edge where a sum first is
   not finite, a graph whose total compute, output and workspace bytes or
   edge bytes overflow, or whose times in its own units (see dp_check) do:
   each cost finite, their sum inf (two ops of 1e308) is refused too. */
DPDEF int  dp_graph_finalize(dp_graph *g, dp_error *err);
DPDEF void dp_graph_free(dp_graph *g);
/* Deep copy of a finalised graph. */
DPDEF int  dp_graph_copy(dp_graph *dst, const dp_graph *src, dp_error *err);

/* ======================================================================
   >>api-formats
   Native format (".dpg"), one record per line, '#' starts a comment:
       doppler-graph 1
       counts ops=N edges=E weights=W         (optional, see below)
       units speed=1e10 bandwidth=1e10        (optional, default 1 1)
       external_inputs 36                     (optional, DOPPLER files)
       devtimes 3                             (optional: columns of time=)
       weight NAME [bytes=B]                  (optional: a resident tensor
                                               that ops share, see below)
       op NAME [kind=K] [compute=C] [bytes=B] [mem=M] [time=t0,t1,...]
               [shape=RxC] [arg=A]   (real ops: float32 output shape, parameter)
               [resident=R]          (bytes held on its device all run)
               [weights=W1,W2,...]   (declared weights it uses)
               [source=S1,S2,...]    (the names it had in its source model)
       edge SRC DST [bytes=B]                 (default: SRC's bytes)
       end                                    (optional, see below)
   Weights are declared before the first op, ops before the edges that use
   them. A field given twice on a line is refused ("field 'compute' given
   twice"). The writer puts a counts line before the first weight and op
   and an end line last; a file that has a counts line must hold exactly
   that many ops, edges and weights (each key optional) and end with its
   end line (then only comments and blank lines), so that a file cut short
   anywhere, at a line boundary or inside a line, is refused naming what is
   missing ("truncated: the file ends without its 'end' line, holding 58 of
   100 ops, 0 of 313 edges"). Files without a counts line (written before
   there was one, such as those in graphs/, or by hand) are read without
   this check, as before. Source names are any non-empty byte strings without NUL (ONNX
   node names with spaces, '#', 200 characters, ...), percent-encoded:
   every byte <= 0x20, 0x7f and the bytes of '%' ',' '=' '#' as %XX (two
   hex digits), every other byte as is; they round-trip exactly (op
   names, which edges refer to, stay short identifiers). Numbers are written
   with 17 significant digits so that a file round-trips exactly.
   DOPPLER format: see ../shared/data/README.md; costs in the reference's
   units, so dp_cluster_for_graph gives speed = bandwidth = 1e10.
   STG: costs as given, no communication; task 0 and n+1 (the dummy entry
   and exit) are kept as zero-cost ops so node i is task i.
   The DOPPLER and STG formats carry no workspace, resident bytes,
   weights or source names (writing a graph with resident bytes, weights
   or source names to them fails with DP_ERR_FORMAT). Both carry their
   counts (DOPPLER: the node count and the input ids; STG: the task count,
   each task's predecessor count) and a file that ends before them is
   refused ("truncated: expected 12 op lines"); a cut inside the last line
   is not seen by them.
   Binary format (".dpb", DP_FORMAT_BINARY): what a native file holds,
   for graphs read many times: read mapped (mmap; a stream is read into
   memory) without parsing, after every count, offset and checksum in it
   is checked against the file and the limits above, each value checked
   as the text readers check theirs; a file cut short or corrupted is
   refused naming the file, the offset and the value at fault ("g.dpb:
   offset 16: the header says 4096 bytes, the file has 2000 (truncated)",
   "g.dpb: offset 4200 (section 'compute', op 12): compute cost '-4' is
   negative"). dpg -> dpb -> dpg gives the same native file. Layout, every
   number little-endian (any host reads and writes it so), u32/u64
   unsigned, i32 signed, f64 IEEE-754 binary64:
       offset  size  field
        0       8    magic 89 44 50 42 0D 0A 1A 0A ("\x89DPB\r\n\x1a\n": no
                     text reader takes it, and a CRLF or 7-bit mangling
                     shows)
        8       4    u32 version (1)
       12       4    u32 sections S (19 in version 1)
       16       8    u64 the file's length in bytes
       24      24    u32 ops, edges, weights, weight uses, per-device time
                     columns (devtimes), external inputs
       48      16    f64 units speed, bandwidth
       64       8    u64 0 (reserved)
       72       8    u64 checksum of bytes 0..71 and the section table
       80    32 S    section table: per section, in the order below, an
                     8-byte NUL-padded tag, u64 offset, u64 bytes, u64
                     checksum of its bytes
   (the checksum at 72 is that of the 72 bytes before it followed by the
   table). Then the sections, each at a multiple of 8, in table order,
   after the one before (the writer pads with zeros, never read):
       opname    the op names, each ended by a NUL, in op order
       opkind    u8 per op: its kind (dp_kind)
       compute, outbytes, mem, resident: f64 per op
       rows, cols, arg: i32 per op
       devtime   f64 per op and column, op by op (ops x devtimes)
       nsource   i32 per op: its source names
       source    every op's source names in op order, each NUL-ended
       src, dst  i32 per edge: its ops;  bytes  f64 per edge
       wname     the weight names, NUL-ended;  wbytes  f64 per weight
       useop, usewt  i32 per use: the op and the weight it uses
   A numeric section whose values are all zero (bit for bit) may hold 0
   bytes (opkind, compute, outbytes, mem, resident, rows, cols, arg,
   nsource, bytes, wbytes); any other holds exactly its count times its
   size. The checksum of n bytes: h = 0x9E3779B97F4A7C15; for each 8-byte
   little-endian word w (the last one padded with zero bytes), h = (h ^
   w) * 0xBF58476D1CE4E5B9 then h ^= h >> 31; then z = h ^ n mixed by
   splitmix64's finalizer (z ^= z >> 30, z *= 0xBF58476D1CE4E5B9, z ^= z
   >> 27, z *= 0x94D049BB133111EB, z ^= z >> 31). Each step is a
   bijection of h, so a change within any one word always shows.
   Assignment file: line i holds the device of node i; '#' comments; a
   file with fewer (or more) lines than the graph has ops is refused.
   Every text input (graphs, assignments, clusters) may end its lines in
   CRLF and start with a UTF-8 byte-order mark, which is skipped. Graphs,
   assignments and mapping files read from a path are refused as soon as
   a byte arrives that no text holds (NUL, a control byte but tab, LF, VT,
   FF, CR; DEL): /dev/zero or /dev/urandom given as a graph fails on its
   first read; a stream (a pipe, a character device) is refused once it
   passes DP_MAX_FILE_BYTES, holding at most that plus one read. A value
   quoted in a message is cut in the middle ("1234...6789") when long, so
   that the reason that follows it always shows.
   ====================================================================== */
DPDEF int dp_graph_read(dp_graph *g, const char *path, dp_format fmt, dp_error *err);
DPDEF int dp_graph_read_mem(dp_graph *g, const char *buf, size_t len,
                            const char *name, dp_format fmt, dp_error *err);
DPDEF int dp_graph_write(const dp_graph *g, const char *path, dp_format fmt, dp_error *err);
DPDEF int dp_graph_write_file(const dp_graph *g, FILE *f, dp_format fmt, dp_error *err);
/* DP_FORMAT_AUTO when the content is none of the four (binary: its magic). */
DPDEF dp_format   dp_format_detect(const char *buf, size_t len);
/* .stg -> STG; .txt, .doppler -> DOPPLER; .dpb -> binary; anything else ->
   native. */
DPDEF dp_format   dp_format_from_path(const char *path);
DPDEF int         dp_format_parse(const char *name, dp_format *out);  /* "stg" */
DPDEF const char *dp_format_name(dp_format fmt);

DPDEF int dp_assign_read(const char *path, int n_ops, int n_devices, int *assign, dp_error *err);
DPDEF int dp_assign_read_mem(const char *buf, size_t len, const char *name,
                             int n_ops, int n_devices, int *assign, dp_error *err);
DPDEF int dp_assign_write(const char *path, const int *assign, int n_ops, dp_error *err);

/* Mapping file: a placement keyed by the names the ops had in the model
   they came from, to hand it back to that model (demos/torch_place.py
   applies one to a PyTorch module). JSON:
     {"format": "doppler-mapping 1", "graph": G, "method": M,
      "devices": N, "makespan": T, "ops": V, "entries": K,
      "mapping": {"NAME": DEVICE, "SHARED NAME": [DEVICE, ...], ...}}
   The keys are every op's source names (see the native format), or its
   op name where it has none, in op order; a name that K > 1 entries share
   (two ONNX nodes may both be named "dup") maps to the list of their
   devices in that order. Strings are JSON-escaped; a byte that is not
   part of valid UTF-8 is written as \u00XX. info may be NULL (graph,
   method null; devices 1 + the largest device; makespan null when not
   finite or negative). */
typedef struct dp_mapping_info {
    const char *graph, *method;  /* labels written as given (NULL: null)   */
    int         devices;         /* 0: 1 + the largest device in assign    */
    double      makespan;        /* < 0 or not finite: null                */
} dp_mapping_info;
DPDEF int dp_mapping_write(const char *path, const dp_graph *g, const int *assign,
                           const dp_mapping_info *info, dp_error *err);
/* Reads a mapping file back into an assignment of g (devices 0..n_devices
   - 1): its "mapping" object is matched against the ops' source names (op
   names where an op has none), a list's devices in op order; the other
   fields are not checked. Every entry of g must be there with one device
   per entry, the entries of one op must agree, and every key must name an
   entry of g: otherwise DP_ERR_GRAPH naming the op or key (and assign is
   left as it was). \u escapes are decoded to UTF-8 (a byte the writer
   escaped because it was not UTF-8 does not come back). */
DPDEF int dp_mapping_read(const char *path, const dp_graph *g, int n_devices, int *assign, dp_error *err);
DPDEF int dp_mapping_read_mem(const char *buf, size_t len, const char *name, const dp_graph *g,
                              int n_devices, int *assign, dp_error *err);

/* Output files. Every file the library writes (graphs, assignments,
   clusters, policies, SVGs) and dp_write_file follow one rule:
     PATH a regular file, or nothing yet: written to PATH.tmp, renamed over
       PATH on success; a failure leaves PATH as it was and no PATH.tmp.
       A file replaced keeps its mode, owner and group as far as the
       process may set them (fchown, then fchmod, on PATH.tmp before the
       rename); a file with several hard links (st_nlink > 1) is written
       in place instead, truncated and copied from the complete PATH.tmp,
       so that its links stay one file (a failure while copying can leave
       it cut short: the message says so);
     PATH a symbolic link: the rule applied to the file it points to (a
       chain of up to 40 links; a link to nothing creates its target); the
       link stays a link;
     anything else (a character device such as /dev/null, a FIFO), and a
       link in /proc (/dev/stdout, /dev/fd/N lead there): written in place
       (a FIFO's open waits for a reader); a write error (ENOSPC from
       /dev/full) fails with DP_ERR_IO.
   Refused with DP_ERR_IO naming PATH and why, before anything is written:
   a directory; a new name or a regular file whose directory does not
   exist or may not be written; a read-only file (one access(W_OK)
   refuses, or with no write permission bit at all, so that root too
   leaves it alone). A PATH.tmp that is a link is refused, not followed.
   dp_write_file opens PATH by that rule, calls fn(ctx, f, err) to write the
   content and closes it; a nonzero return from fn fails the call (and
   leaves a regular PATH as it was). */
typedef int (*dp_write_fn)(void *ctx, FILE *f, dp_error *err);
DPDEF int dp_write_file(const char *path, dp_write_fn fn, void *ctx, dp_error *err);

/* Several outputs of one task, put in place together: a failure anywhere
   leaves every existing output as it was. Add each output before any
   work (dp_outputs_add checks it by the rule above, and refuses with
   DP_ERR_ARG a name of the same file as an output added before, or a
   name that is another output's PATH.tmp: existing files compared by
   st_dev and st_ino, new names by their resolved directory and name),
   and check the task's inputs against them (dp_outputs_input: DP_ERR_ARG
   for an input that is one of the outputs; a name that is not there is
   left to its reader). After the work, dp_outputs_stage gives the name
   to write output i to with any writer of the library: PATH.tmp, made
   with PATH's mode, owner and group (a device, a FIFO or a link in /proc:
   PATH itself, written in place at once). dp_outputs_commit then puts
   every staged output in place by the rule (renamed, or copied in place
   when it has several links), and dp_outputs_free removes what is staged
   and not committed and frees the set:

       dp_outputs os = {0};
       const char *to;
       if (dp_outputs_add(&os, "g.assign", &err) || dp_outputs_add(&os, "g.svg", &err) ||
           dp_outputs_input(&os, "g.dpg", &err)) goto out;
       ... the work ...
       if (dp_outputs_stage(&os, 0, &to, &err) || dp_assign_write(to, assign, n, &err) ||
           dp_outputs_stage(&os, 1, &to, &err) || dp_gantt_svg(to, &sim, assign, NULL, &err) ||
           dp_outputs_commit(&os, &err)) goto out;
     out:
       dp_outputs_free(&os);

   A commit refused part way (a rename failing) leaves the outputs put in
   place before it and removes the others' temporaries. Zero-means-empty:
   {0} is an empty set; n counts the outputs added. */
typedef struct dp_outputs {
    int n;          /* outputs added: 0 .. n - 1                          */
    void *impl;     /* the library's: NULL until the first dp_outputs_add  */
} dp_outputs;
DPDEF int  dp_outputs_add(dp_outputs *os, const char *path, dp_error *err);
DPDEF int  dp_outputs_input(const dp_outputs *os, const char *path, dp_error *err);
DPDEF int  dp_outputs_stage(dp_outputs *os, int i, const char **name, dp_error *err);
DPDEF int  dp_outputs_commit(dp_outputs *os, dp_error *err);
DPDEF void dp_outputs_free(dp_outputs *os);

/* ======================================================================
   >>api-cluster
   Cluster file (".dpc"):
       doppler-cluster 1
       counts devices=4     (optional; then the file must end with a line
                             'end' and have 4 devices: dp_cluster_write
                             writes both, so a cut file is refused; files
                             without it read as before, unchecked)
       devices 4
       link free|serial
       speed 1e10           (all devices; default 1)
       bandwidth 1e10       (all pairs; default 1)
       latency 0            (all pairs; default 0)
       memory 16e9          (all devices; 0 = unlimited)
       overhead 0           (all devices: time added to every op; default 0)
       device I [name=N] [speed=S] [memory=M] [overhead=O] [node=J]
       nodes K              (devices split into K nodes (machines) of
                             consecutive devices: device d on d K / n)
       internode [bandwidth=B] [latency=L]  (every link between two nodes,
                             as the devices' nodes stand at that line)
       pair A B [bandwidth=B] [latency=L]     (one direction, A -> B)
       kindspeed DEVICE|all KIND SPEED        (compute per time unit of one
                                               op kind; others use speed)
       kindspeed DEVICE|all KIND W:S W:S ...  (a speed curve: speed S at
                                               work W, W strictly increasing,
                                               at most DP_MAX_CURVE points)
   The cost model: op v of kind k on device d (no per-device time given)
   takes  overhead[d] + compute[v] / s,  where s is, in order of
   precedence, the kind's curve on d at work W = compute[v] (linear in
   ln W between the two points around W, the end speed outside them), the
   kind's single speed, the device's speed. `doppler calibrate` writes
   curves measured at several sizes and the per-op overhead; a cluster
   without them (every file of format 1 before them) is the plain
   compute / speed model. An op with a per-device time (time= in the
   graph) takes exactly that time.
   Presets (dp_cluster_preset): "reference" = the DOPPLER reference's 4
   identical GPUs in its units (speed = bandwidth = 1e10, free links);
   "homogeneous:N" = N identical unit devices.
   Real GPUs (dp_cluster_preset_at, a precision): "h100-sxm:N" (N = 1..8
   H100 SXM5 80GB on NVLink 4 through NVSwitch, an HGX H100 board),
   "h200-sxm:N" (H200 141GB, the same links), "h100-pcie:N" (H100 PCIe
   80GB, PCIe Gen5 between them), "a100-sxm:N" (A100 SXM4 80GB, NVLink 3),
   "a100-pcie:N" (A100 PCIe 80GB, PCIe Gen4); ":N" left out = 8. Units
   are seconds, FLOP/s and bytes, the units of graphs that carry FLOPs and
   bytes (demos/onnx2dpg.py writes them). Per precision ("fp32" by
   default, "tf32", "bf16", "fp16", "fp8" on H100/H200): matmul at the
   sustained matrix speed (70% of the datasheet's dense peak: fp32 on the
   FMA units, the others on tensor cores); the memory-bound kinds
   (element-wise, normalisations, softmax, copies, reductions, opaque) at
   90% of the memory bandwidth over the bytes each FLOP of theirs moves
   at that precision's element size (add: 3 elements read or written per
   FLOP, relu 2, softmax and layernorm 2/5, ..., see dp__gpu_kinds);
   links at 80% of the per-direction bandwidth, one transfer at a time
   per pair (link serial); memory the whole HBM; 5 us per op (a kernel
   launch) and 5 us (NVLink) or 10 us (PCIe) per transfer. The peaks
   come from the vendors' datasheets (cited at dp__gpus); the three
   fractions and the overheads are this library's assumptions, not
   measurements: `doppler calibrate --backend cuda` measures a real GPU
   into a cluster file. A matmul bound by memory (batch-1 GEMV) is priced
   at the matrix speed: the cost model has no per-op memory traffic.
   ====================================================================== */
typedef enum dp_link_model { DP_LINK_FREE = 0, DP_LINK_SERIAL } dp_link_model;

#define DP_MAX_CURVE 16     /* points in one kind's speed curve           */
typedef struct dp_speed_point { double work, speed; } dp_speed_point;

typedef struct dp_cluster {
    int n;                  /* devices                                   */
    dp_link_model link;
    double *speed;          /* [n] compute per time unit                  */
    double *kind_speed;     /* [n * DP_KIND__COUNT] per op kind; 0 = speed */
    double *memory;         /* [n] bytes; 0 = unlimited                   */
    double *bandwidth;      /* [n*n] bytes per time unit, a*n+b = a -> b   */
    double *latency;        /* [n*n] time units                           */
    char  (*name)[32];      /* [n]                                        */
    double *overhead;       /* [n] time units added to every op; 0 = none  */
    dp_speed_point *curve;  /* point i of kind k on device d:
                               [(d * DP_KIND__COUNT + k) * DP_MAX_CURVE + i] */
    int    *curve_len;      /* [n * DP_KIND__COUNT] points; 0 = no curve   */
    int    *node;           /* [n] the node (machine) of each device; NULL
                               or all 0: one node. Only dp_cluster_set_nodes,
                               the file and the writer read it: links across
                               nodes cost what bandwidth and latency say    */
} dp_cluster;

DPDEF int  dp_cluster_homogeneous(dp_cluster *c, int n, double speed, double bandwidth,
                                  double latency, dp_error *err);
/* n devices in the graph's own units (DOPPLER files: 1e10 and 1e10);
   n <= 0: as many as the graph has per-device times for, else 4. */
DPDEF int  dp_cluster_for_graph(dp_cluster *c, const dp_graph *g, int n, dp_error *err);
DPDEF int  dp_cluster_preset(dp_cluster *c, const char *name, dp_error *err);
/* A preset with a precision (NULL = "fp32"); only the real GPUs take one
   (others: DP_ERR_ARG unless precision is NULL). */
DPDEF int  dp_cluster_preset_at(dp_cluster *c, const char *name, const char *precision, dp_error *err);
DPDEF int  dp_cluster_read(dp_cluster *c, const char *path, dp_error *err);
DPDEF int  dp_cluster_read_mem(dp_cluster *c, const char *buf, size_t len,
                               const char *name, dp_error *err);
DPDEF int  dp_cluster_write(const dp_cluster *c, const char *path, dp_error *err);
DPDEF void dp_cluster_free(dp_cluster *c);
/* Sets the speed curve of `kind` on device dev (dev < 0: every device)
   from n points (n = 0 clears it); work strictly increasing, work and
   speed positive and finite. Clears the kind's single speed there. */
DPDEF int  dp_cluster_set_curve(dp_cluster *c, int dev, dp_kind kind, const dp_speed_point *pts,
                                int n, dp_error *err);
/* Multiplies every compute speed of device dev (dev < 0: every device) by
   factor (positive, finite): its speed, per-kind speeds and speed curves.
   Overheads, latencies and bandwidths stay. See dp_calibrate_cpu_speed. */
DPDEF int  dp_cluster_scale_speed(dp_cluster *c, int dev, double factor, dp_error *err);
/* Splits c's devices into k nodes of consecutive devices (device d on node
   d * k / n: equal nodes when k divides n) and gives every link between
   two nodes bandwidth and latency (positive, and finite and >= 0); links
   inside a node stay. k = 1: one node, no link changed. */
DPDEF int  dp_cluster_set_nodes(dp_cluster *c, int k, double bandwidth, double latency, dp_error *err);
/* Checks that graph and cluster fit together: per-device time columns,
   and times that stay finite (DP_ERR_RANGE naming the op or edge where a
   sum first is not): every op on its slowest device one after another,
   then every edge on the slowest link, bounds every finish time of every
   placement; that sum, every op time and every link's time per byte must
   be finite. The simulator, placers, policies and executors call it. */
DPDEF int  dp_check(const dp_graph *g, const dp_cluster *c, dp_error *err);

DPDEF double dp_op_time(const dp_graph *g, const dp_cluster *c, int op, int dev);
DPDEF double dp_xfer_time(const dp_cluster *c, double bytes, int from, int to);
DPDEF int    dp_fastest_device(const dp_graph *g, const dp_cluster *c, int op);

/* Measures this machine into a cluster of `devices` identical CPU devices
   (FLOP/s, bytes/s, seconds) so that the simulator predicts dp_exec_cpu's
   wall time for real-op graphs whose compute follows dp_op_flops: per op
   kind, the speed curve of its executor path (kernel and output hash) on
   side x side operands for sides 16, 32, ... up to `size`, with every
   device's thread computing at once, each measurement the mean thread
   CPU time per call (another process taking the CPU does not count: the
   cluster describes the machine, not its load);
   each point the median over `sweeps` passes over every kind and side
   (this machine's speed moves by up to 45% for 100s of milliseconds at a
   time: a pass that meets such a spell is outvoted);
   the executor's per-op overhead (tiny ops, every device at once); and
   the hand-off between two devices: latency from 1 x 1 chains alternating
   between devices against the same on one device, bandwidth from the same
   with side x side tensors (side at most 512), capped at memcpy's
   bandwidth. Speed of opaque ops: the largest matmul's. About 16 kinds x
   sides x sweeps x `seconds`, plus ~1 s (about 3.5 s by default). The
   fields are not CPU-specific: a GPU calibration fills the same ones
   (curves, overhead, latency, bandwidth). */
typedef struct dp_calibrate_opts {
    int    devices;   /* 0 -> 2                                       */
    int    size;      /* largest tensor side; 0 -> 512 (8..2048)       */
    double seconds;   /* per measurement; 0 -> 0.005 (CUDA: 0.05, the
                         copy bandwidth probes only: its op curves
                         are chains of fixed length)                   */
    int    sweeps;    /* CPU: passes, each point their median; 0 -> 5
                         (1..100). CUDA: ignored                       */
    int    dispatch;  /* CUDA: the dp_dispatch_mode the cluster is for
                         (the per-op overhead and hand-off latency are
                         measured under it; 0 dynamic). CPU: 0 only   */
    int    precision; /* CUDA: the dp_precision of the matmul measured
                         (0: as dp_exec_cuda's default). CPU: DEFAULT
                         or FP32 only                                  */
} dp_calibrate_opts;
DPDEF int dp_calibrate_cpu(dp_cluster *out, const dp_calibrate_opts *opts, dp_error *err);

/* This machine's speed now against a calibration c from dp_calibrate_cpu
   (for a shared or virtual machine whose speed drifts: on ours the ops'
   CPU time moved by up to 45% between a calibration and runs seconds
   later, in spells of seconds). Measures, as dp_calibrate_cpu does, a
   matmul (compute-bound) and an add (memory-bound) of side opts->size / 2
   (256 by default) for opts->seconds each (0.005 by default), every
   device's thread at once (c->n of them; opts->devices is ignored), and
   sets *factor to the geometric mean of c's predicted time over the
   measured one for the two (1: as calibrated; 0.8: 20% slower). About
   2 x seconds. dp_cluster_scale_speed(c, -1, factor) then refreshes c's
   speeds; latency, bandwidth and overhead are not re-measured. */
DPDEF int dp_calibrate_cpu_speed(const dp_cluster *c, const dp_calibrate_opts *opts, double *factor, dp_error *err);

/* ======================================================================
   >>api-simulator
   dp_sim_init allocates a workspace for one (graph, cluster) pair; every
   dp_sim_run after it allocates nothing. Results stay in the dp_sim until
   the next run. Cost: O((V + E) log V) per run.
   ====================================================================== */
typedef enum dp_order { DP_ORDER_FIFO = 0, DP_ORDER_PRIORITY } dp_order;

typedef struct dp_sim_opts {
    dp_order order;          /* FIFO (the reference) or PRIORITY           */
    const double *priority;  /* [n_ops], higher first; NULL -> b-level    */
    int track_memory;        /* fill peak_bytes (a little slower)          */
    int no_xfers;            /* 1: transfers not recorded (n_xfers 0): the
                                makespan, starts and ends only, without
                                writing a record per cross-device edge (the
                                searches score placements so: 15% less
                                memory for the learned placer at 10^5 ops);
                                and, without track_memory on free links,
                                no event per copy either (the same times,
                                sooner: the learned placer's samples)     */
} dp_sim_opts;

typedef struct dp_xfer {
    int edge, from, to;      /* graph edge, source and destination device */
    double start, end;
} dp_xfer;

typedef struct dp_sim {
    const dp_graph   *g;
    const dp_cluster *c;
    /* results of the last dp_sim_run */
    double  makespan;
    double *start, *end;     /* [n_ops]                                    */
    double *busy;            /* [n_devices] total compute time             */
    double *peak_bytes;      /* [n_devices] when track_memory              */
    dp_xfer *xfers;          /* [n_xfers], in issue order                  */
    int     n_xfers;
    long    runs;            /* successful dp_sim_run calls so far          */
    int     memory_tracked;  /* the last run had track_memory              */
    void   *dp__ws;          /* private workspace                          */
} dp_sim;

DPDEF int  dp_sim_init(dp_sim *s, const dp_graph *g, const dp_cluster *c, dp_error *err);
DPDEF int  dp_sim_run(dp_sim *s, const int *assign, const dp_sim_opts *opts, dp_error *err);
DPDEF void dp_sim_free(dp_sim *s);
/* One-shot convenience: init, run, free. */
DPDEF int  dp_simulate(const dp_graph *g, const dp_cluster *c, const int *assign,
                       const dp_sim_opts *opts, double *makespan, dp_error *err);

/* ======================================================================
   >>api-analysis
   ====================================================================== */
/* b-level (HEFT's upward rank): mean op time over devices plus, along the
   longest path to a sink, mean transfer time over distinct device pairs.
   t-level: the same, longest path from a source, excluding the op. */
DPDEF int    dp_blevel(const dp_graph *g, const dp_cluster *c, double *out);
DPDEF int    dp_tlevel(const dp_graph *g, const dp_cluster *c, double *out);
/* max(critical path with every op on its fastest device and no
   communication, total fastest-device work / devices); 0 when out of
   memory (dp_graph_stats reports that). */
DPDEF double dp_lower_bound(const dp_graph *g, const dp_cluster *c);

typedef struct dp_stats {
    int    nodes, edges, sources, sinks, depth; /* depth: ops on longest chain */
    double total_compute;   /* sum of compute                             */
    double cp_length;       /* critical path, fastest device, no comm     */
    double work_bound;      /* total fastest-device work / devices        */
    double lower_bound;     /* max(cp_length, work_bound)                 */
    double total_bytes;     /* sum of edge bytes                          */
} dp_stats;
/* DP_ERR_RANGE when a value would not be finite: a cluster dp_check refuses. */
DPDEF int dp_graph_stats(const dp_graph *g, const dp_cluster *c, dp_stats *out);

/* Memory each device needs to hold everything placed on it: outputs,
   workspaces and resident bytes of its ops, each weight its ops use once,
   plus the copy made by every edge that reaches it from another device
   (the simulator's per-edge transfers). The placers keep this within
   dp_cluster.memory when that is set; it bounds the simulated peak.
   dp_resident_memory: the resident part alone (own bytes and weights),
   held from before the run starts. */
DPDEF int dp_static_memory(const dp_graph *g, const dp_cluster *c, const int *assign, double *bytes);
DPDEF int dp_resident_memory(const dp_graph *g, const dp_cluster *c, const int *assign, double *bytes);
/* After a dp_sim_run with track_memory: DP_ERR_INFEASIBLE, naming the
   first device whose peak passes its memory (with the peak and the
   limit), when one does; 0 otherwise (and for unlimited memory). */
DPDEF int dp_sim_check_memory(const dp_sim *s, dp_error *err);

/* ======================================================================
   >>api-placers
   Every placer fills assign[n_ops] with device ids and reports the
   simulated makespan of the result (FIFO unless opts->order says).
     single       every op on the device that runs the whole graph fastest
     round-robin  the k-th op in topological order on device k mod N
     random       a uniform device per op, from opts->seed
     cp           the DOPPLER expert: repeatedly take the legal op (all
                  predecessors placed) of largest b-level, ties lower index;
                  put it on the device where it can start earliest (inputs
                  arrived, device free after its last placed op), ties
                  lower device
     heft         Topcuoglu et al.: ops by upward rank (= b-level), each on
                  the device of earliest finish, inserting into idle gaps
                  (each device's gaps in a search tree: O(log ops) per
                  op and device, so near-linear on 10^6-op chains)
     enumopt      start from opts->start (default cp; under memory limits
                  where cp finds none, heft's, then pipeline's); visit ops by
                  decreasing b-level, try every device for the op and keep
                  the one of lowest simulated makespan (a strict gain only);
                  repeat passes until one changes nothing (at most
                  opts->max_passes); without max_passes or a time limit
                  also at most opts->time_bound seconds (30): a pass over
                  a large graph takes minutes (the result says so)
     anneal       simulated annealing from opts->start (default as
                  enumopt): move one random op to a random other device
                  (under memory limits the first one from there round
                  where the placement still fits), accept by the
                  Metropolis rule, temperature from 5% to 0.01% of the
                  start makespan, geometric over opts->budget simulations;
                  returns the best placement seen. Without a budget or a
                  time limit it is 20 x ops x devices simulations or
                  opts->time_bound seconds (30), whichever ends first: a
                  large graph's search stops at the bound where it stands
                  in its cooling (the result says so, time_limited)
     enumopt and anneal score a move by a lower bound first (the longest
     path through the moved op, its new device's work) and simulate only
     the moves it does not decide: the same search, its decisions and
     random draws unchanged (result.bounded counts the moves decided;
     opts->no_move_bound simulates them all)
     pipeline     what a hand split or torch's pipelining gives: the ops
                  in topological order cut into at most N consecutive
                  stages, stage k on device k, the cuts minimising the
                  slowest stage's compute time with every stage within
                  its device's memory (a binary search on that time, each
                  stage grown while it holds both)
   When a cluster device has memory > 0, every placer keeps
   dp_static_memory within it, or fails with DP_ERR_INFEASIBLE naming
   the op that fits nowhere and every device's room.
   Never worse than one device: every method but single also scores the
   best single-device placement that fits (the device that runs the whole
   graph fastest) and returns it instead when its makespan is lower, or
   when the method found no placement within memory
   (dp_place_result.fallback = 1; dp_place_opts.no_fallback turns it off).
   ====================================================================== */
#define DP_METHODS(X)                                                   \
    X(SINGLE, "single")    X(ROUND_ROBIN, "round-robin")                \
    X(RANDOM, "random")    X(CP, "cp")    X(HEFT, "heft")               \
    X(ENUMOPT, "enumopt")  X(ANNEAL, "anneal") X(PIPELINE, "pipeline")

#define DP__METHOD_ENUM(id, text) DP_METHOD_##id,
typedef enum dp_method { DP_METHODS(DP__METHOD_ENUM) DP_METHOD__COUNT } dp_method;
#undef DP__METHOD_ENUM

DPDEF const char *dp_method_name(dp_method m);
DPDEF int         dp_method_parse(const char *name, dp_method *out);

typedef struct dp_place_opts {
    uint64_t seed;          /* random, anneal                              */
    dp_order order;         /* runtime order used to score placements      */
    int      budget;        /* anneal: simulations; 0 -> 20 * ops * devices,
                               within time_bound (below)                    */
    int      max_passes;    /* enumopt: 0 -> until no move improves (<=100),
                               within time_bound (below)                    */
    const int *start;       /* enumopt, anneal: initial placement; NULL -> cp */
    int      no_fallback;   /* 1: return the method's own answer even where
                               one device does better                     */
    /* enumopt, anneal: called about once a second while they search (NULL:
       never), with ctx, the simulations run so far, the planned total
       (anneal: its budget; enumopt: 0, not known ahead) and the best
       makespan so far. It only reports: the placement, makespan and
       simulation count are the same with it or without it. */
    void   (*progress)(void *ctx, long simulations, long total, double best);
    void    *progress_ctx;
    double   time_limit;    /* enumopt, anneal: seconds from the call, 0 =
                               none. The search looks at the clock about
                               every 65536 ops simulated (every 64
                               simulations at most, every one on a graph
                               that large): the first look past it stops
                               the search with the best placement found so
                               far, and the result says so (time_limited).
                               The one source of nondeterminism, off unless
                               asked for or reached by time_bound          */
    int      no_move_bound; /* enumopt, anneal (and the learned placers'
                               polish): 1 = simulate every move. By default
                               a move whose lower bound (the longest path
                               through the moved op, its new device's work)
                               already decides it is not simulated: the
                               same decisions and random draws, so the same
                               placement, in less time (for measuring)    */
    double   time_bound;    /* anneal with neither budget nor time_limit:
                               its default budget, 20 x ops x devices
                               simulations, stops after this many seconds
                               from the call if not spent by then (the
                               temperature keeps its schedule over the
                               whole count: the search ends where it
                               stands); enumopt with neither max_passes
                               nor time_limit: its passes stop there (the
                               best placement so far); 0 ->
                               DP_ANNEAL_TIME_BOUND (30 s), < 0 -> none.
                               Graphs of a few hundred ops on up to 8
                               devices end well within it (300 ops on 8:
                               anneal about 5 s on a 2-core VM); more
                               devices or ops may not (give a budget)     */
} dp_place_opts;

typedef struct dp_place_result {
    double makespan;        /* simulated, with opts->order                  */
    double schedule_length; /* the placer's own schedule (cp, heft), else = makespan */
    double lower_bound;
    long   simulations;     /* simulator runs, the final scoring one included */
    long   bounded;         /* enumopt, anneal: moves their lower bound
                               decided without a simulation (simulations +
                               bounded: the moves scored, as a budget
                               counts them)                               */
    double seconds;
    int    fallback;        /* 1: the best single device was returned (it
                               beat the method's answer, or the method found
                               none within memory)                        */
    int    time_limited;    /* 0: the search ran to its end; DP_TIME_LIMITED:
                               opts->time_limit stopped it; DP_TIME_BOUNDED:
                               the default time bound did (time_bound)     */
} dp_place_result;

/* dp_place_result.time_limited (and the learned placers' flags): which
   clock ended a search before its end. */
enum { DP_TIME_LIMITED = 1,   /* the caller's time_limit                    */
       DP_TIME_BOUNDED = 2 }; /* anneal's and enumopt's default time bound  */
#define DP_ANNEAL_TIME_BOUND 30.0  /* seconds: dp_place_opts.time_bound's default
                                      (anneal's and enumopt's)              */

DPDEF int dp_place(dp_method m, const dp_graph *g, const dp_cluster *c,
                   const dp_place_opts *opts, int *assign, dp_place_result *res,
                   dp_error *err);

/* The list schedulers, exposed for the learning code: cp also writes the
   order in which it placed ops (order[k] = k-th op placed) when asked. */
DPDEF int dp_place_cp(const dp_graph *g, const dp_cluster *c, int *assign, int *order,
                      double *schedule_length, dp_error *err);
DPDEF int dp_place_heft(const dp_graph *g, const dp_cluster *c, int *assign,
                        double *start, double *finish, double *schedule_length,
                        dp_error *err);

/* ======================================================================
   >>api-gantt
   One lane per device, ops as boxes with tooltips, transfers as arrows
   between lanes, makespan and lower bound in the title; where the run
   tracked memory (dp_sim_opts.track_memory), each device's peak bytes
   beside its lane (of its memory, red when over it).
   ====================================================================== */
typedef struct dp_gantt_opts {
    const char *title;      /* NULL -> "schedule"                          */
    int width;              /* pixels; 0 -> 1200                          */
    int hide_transfers;
    int max_transfers;      /* draw no arrows when there are more; 0 -> 600 */
    double lower_bound;     /* 0 -> dp_lower_bound (in the cluster's units) */
} dp_gantt_opts;
DPDEF int dp_gantt_svg(const char *path, const dp_sim *s, const int *assign,
                       const dp_gantt_opts *opts, dp_error *err);
DPDEF int dp_gantt_svg_file(FILE *f, const dp_sim *s, const int *assign,
                            const dp_gantt_opts *opts, dp_error *err);

/* ======================================================================
   >>api-gen
   Random DAGs in the manner of DAGGEN (Suter): ops arranged in levels;
   width ~ the mean ops per level, regularity how much level sizes vary,
   density the probability of each candidate edge, jump how many levels an
   edge may span (layered: 1), ccr the ratio of mean transfer time to mean
   op time on a unit cluster. Costs uniform in [1, 10] units.
   ====================================================================== */
typedef enum dp_gen_shape { DP_GEN_LAYERED = 0, DP_GEN_RANDOM } dp_gen_shape;
typedef struct dp_gen_opts {
    dp_gen_shape shape;
    int      nodes;          /* 0 -> 100                                  */
    int      width;          /* 0 -> sqrt(nodes)                          */
    double   density;        /* 0 -> 0.3                                  */
    double   regularity;     /* 0 -> 0.5  (1 = all levels the same size)   */
    int      jump;           /* 0 -> 1 (layered) or 3 (random)             */
    double   ccr;            /* 0 -> 0 (no communication); use a tiny
                                value for almost none                      */
    uint64_t seed;
} dp_gen_opts;
DPDEF int dp_gen(dp_graph *g, const dp_gen_opts *opts, dp_error *err);

/* Block-partitioned ML workloads of real ops (inputs, matmul on blocks,
   reduction of partial sums, activations), in the manner of the DOPPLER
   paper's families: chainmm (a chain of `layers` dim x dim matrix
   products) and ffnn (`layers` layers relu(X W) on a batch x dim input),
   every matrix cut into parts x parts blocks. Costs in FLOPs (units: 1e9
   FLOP/s, 1e10 bytes/s). llama-block: one Llama-style block on a batch x
   dim input in P column blocks (rmsnorm, Q/K/V block matmuls, P attention
   heads of transpose, scores, scale, softmax, weighted sum; output
   projection and residual; rmsnorm, gated SiLU MLP, residual);
   llama-layer: `layers` such blocks stacked. Each block's attention is
   over the batch rows (a sequence of `batch` tokens). gpt: a GPT-style
   decoder stack: `layers` blocks of layernorm, Q/K/V, P heads, output
   projection, residual, layernorm, a GELU MLP 4 dim wide, residual; then
   a final layernorm and the language-model head (dim x vocab).
   With weights = 1 the weight matrices are the graph's weights (resident,
   see >>api-graph): each block of W becomes a weight of its bytes used by
   the matmuls that read it, and the graph is of opaque ops (the same
   FLOPs, bytes and edges, less the weights' input ops): a model whose
   weights must fit in device memory, for placement and the simulator
   (real kernels read every operand from an edge). */
typedef enum dp_workload { DP_WL_CHAINMM = 0, DP_WL_FFNN, DP_WL_LLAMA_BLOCK, DP_WL_LLAMA_LAYER, DP_WL_GPT } dp_workload;
typedef struct dp_workload_opts {
    dp_workload kind;
    int parts;    /* P; 0 -> 2   */
    int dim;      /* 0 -> 256    */
    int batch;    /* 0 -> 64     */
    int layers;   /* 0 -> 3      */
    int vocab;    /* gpt: 0 -> 8 dim (a multiple of P)                   */
    int weights;  /* 1: weight matrices as resident weights (see above)  */
} dp_workload_opts;
DPDEF int dp_workload_parse(const char *name, dp_workload *out);  /* "chainmm" */
DPDEF int dp_gen_workload(dp_graph *g, const dp_workload_opts *opts, dp_error *err);

/* ======================================================================
   >>api-learn
   DOPPLER (Yao et al., ICLR 2026): a SEL policy picks the next op among
   the legal ones (all predecessors placed), a PLC policy picks its device.
   Both score with a GNN embedding computed once per episode:
     features  per op, z-scored over the graph: mean op time, b-level,
               t-level, incoming and outgoing transfer time (DP_N_FEAT);
               per device, for the op being placed, from a correct partial
               schedule (earliest start counts transfers and the device's
               free time): work already on it, work of the op's inputs on
               it, earliest and latest end of those inputs, earliest
               feasible start (these five divided by the graph's lower
               bound), that start minus the best over devices (divided by
               the mean op time), and 1 where it is the best; then the same
               two for a one-step lookahead: when all of the op's successors
               could start, the op on this device, their inputs placed so
               far where they are, each successor on its best device (the
               op's finish where it has none); transfers counted
               (DP_N_DEVFEAT). Policies made with the first 7 load with
               zero weights on these two: the same placements.
     GNN       h0 = relu(Win x + bin); K rounds of
               h' = h + relu(Ws h + Wf mean_in(h_u + c_e af)
                                  + Wb mean_out(h_w + c_e ab) + b)
               over the DAG in both directions (c_e: the edge's transfer
               time over the mean op time). SEL and PLC have one each, or
               share one (dp_policy_opts.shared_gnn).
     SEL       score(v) = w2 . relu(Wx x_v + Wh h_v + Wpb pb_v + Wpt pt_v + b1)
               + b2, pb/pt the mean embedding along v's b-level path (to a
               sink) and t-level path (from a source); static per episode,
               softmax over the legal set at every step.
     PLC       score(d) = w2 . relu(Wd f_d + Wx x_v + Wh h_v + WE mean_{u on d} h_u
               + b1) + b2; softmax over devices. f_d comes from the partial
               schedule the placed ops make: each op after its device's
               last one, or with dp_policy_opts.insertion in the first idle
               gap of its device that fits it (dp__gap_start).
     memory    on a cluster with device memory, the softmax is over the
               devices where v still fits (its static bytes, as the
               heuristics count them: dp_static_memory), in training and
               inference alike, with the same features; the cp expert's
               choice is the earliest start among them. Where v fits
               nowhere (earlier choices filled the devices: a dead end)
               the device with the most room takes it and the episode is
               over-full: in training its cost is its simulated makespan
               plus dp_check's bound (every op on its slowest device, every
               edge on the slowest link: more than any placement that
               fits; with dp_train_opts.cost the runtime is not called),
               and dp_policy_place drops such a sample. Per-op logits draw
               in topological order among the devices an op fits, Placeto
               moves an op only where the placement still fits.
   Training: stage "il" imitates the cp expert (largest b-level op,
   earliest-start device, in that partial schedule: with insertion this is
   HEFT's rule; every tied choice counts as correct) on states
   the policy visits (DAgger); "sim" is REINFORCE against the simulator;
   "real" is REINFORCE against dp_train_opts.cost (any runtime; the
   simulator when NULL). Reward: 0 but at the end, where it is
   (baseline - cost) / baseline, baseline the running mean cost of that
   graph, or with dp_train_opts.rollouts = K > 1 the mean cost of the
   other K - 1 episodes of the same update (K rollouts of one graph and
   one forward pass, leave-one-out baselines); discounted by gamma (1 by
   default; the paper: 0.99). Per-step baseline (dp_train_opts.
   step_baseline, beyond the paper; on by default for the simulator's
   cost): the choices at step t cannot change the partial schedule's
   makespan phi_t that the earlier steps built (the latest end on any
   device, as the PLC features estimate it), so step t is credited with
   cost - phi_t only, against b_t, the running mean of that quantity at
   step t (with K > 1 rollouts: the other K - 1 rollouts' mean): its
   return is (b_t + phi_t - cost) / b, b the episode's baseline above.
   phi_t depends on the earlier choices alone, so this is an unbiased
   baseline; it removes the earlier choices' noise from the late ones'
   credit (bench/RESULTS.md part 4 measures it). Two guards, beyond the
   paper, on by default in the REINFORCE stages (bench/RESULTS.md part 4:
   without them long runs collapse onto one device, their logits running
   away until no gradient is left): the anchor (dp_train_opts.anchor)
   adds stage il's imitation loss with a weight that dual ascent raises
   only while the policy's mean -log P(cp expert's choice) exceeds a bound;
   selection (dp_train_opts.select) scores the greedy placement every
   1/20 of the stage and keeps the best parameters, so a stage never
   leaves the policy's own answer worse than it found it. Adam, one
   optimiser per policy, gradient clipping by global norm, entropy
   bonus, epsilon-greedy exploration decayed linearly, learning rate
   decayed linearly to lr_final x lr. dp_train can also hand back the best
   placement any episode reached on each graph (best_assign, best_order,
   best_cost): the paper's deployment stage keeps optimising on the target
   graph and deploys the best placement found, which is search on top of
   the policy (bench/RESULTS.md reports the two apart).
   An episode allocates nothing: every buffer is made once per graph, in
   one 64-byte-aligned block; the dense layers run as matrix products over
   all ops at once (transposed weights made once per episode).

   Placeto (Addanki et al., NeurIPS 2019), dp_policy_opts.algo =
   DP_ALGO_PLACETO: each episode sweeps the ops in topological order from a
   starting placement (dp_train_opts.start, default cp's) and moves each
   to the device the policy picks; the reward of a move is the decrease in
   simulated makespan it caused. Embedding by progressive forward and
   backward message passing, recomputed after every move. Trained by
   default with a one-step improvement (every device of the visited op
   simulated, the policy moved toward the ones that lower the makespan;
   dp_train_opts.placeto_reinforce: the paper's REINFORCE); see >>placeto.
   It shares the layer, optimiser, checkpoint format and training loop
   with DOPPLER; it trains in stage sim only and is tied to a device count.
   ====================================================================== */
#define DP_N_FEAT    5
#define DP_MAX_HIDDEN 512   /* largest hidden size */
#define DP_N_DEVFEAT 9

typedef enum dp_algo { DP_ALGO_DOPPLER = 1, DP_ALGO_PLACETO = 2 } dp_algo;

typedef struct dp_policy_opts {
    int      hidden;        /* H; 0 -> 32 (the paper: 128)                 */
    int      layers;        /* DOPPLER: K message-passing rounds; 0 -> 3
                               (paper: 6). Placeto: K pairs of progressive
                               forward and backward passes; 0 -> 1          */
    int      shared_gnn;    /* DOPPLER: one GNN for SEL and PLC            */
    uint64_t seed;          /* initial weights                             */
    dp_algo  algo;          /* 0 -> DP_ALGO_DOPPLER                        */
    int      devices;       /* Placeto: the device count it places on (its
                               one-hot input and output width); 0 -> 4    */
    int      insertion;     /* DOPPLER: in the partial schedule that PLC sees
                               and the cp expert follows, an op may start in
                               an idle gap its device left (HEFT's insertion;
                               the FIFO runtime also runs a later-placed op
                               that is ready in such a gap), instead of
                               after the device's last op (0, the paper's).
                               The pretrained policy uses it (bench/RESULTS.md
                               part 4). Saved with the policy (file version 3;
                               without it version 2 is written)              */
} dp_policy_opts;

typedef struct dp_policy {
    dp_algo        algo;
    dp_policy_opts opts;     /* with defaults filled in                    */
    int     n_sel, n_plc;    /* parameter counts (Placeto: 0 and all)      */
    double *sel, *plc;       /* flat parameter buffers (Placeto: sel NULL)  */
    /* DOPPLER: per-op logits learnt on one graph (dp_train_opts.op_logits):
       on that graph and cluster (op_key: a hash of its edges, their bytes
       and every op's time on every device) op v goes to device d with
       probability softmax(op_table[v * op_devices .. + op_devices])_d,
       greedy: the largest (ties: the lower device); SEL's order stays the
       network's. Elsewhere the network places as before. NULL: none.
       Saved with the policy (file version 4).                           */
    double  *op_table;
    int      op_n, op_devices;
    uint64_t op_key;
} dp_policy;

DPDEF int  dp_policy_init(dp_policy *p, const dp_policy_opts *opts, dp_error *err);
DPDEF void dp_policy_free(dp_policy *p);
DPDEF int  dp_policy_save(const dp_policy *p, const char *path, dp_error *err);
/* Checks magic, version, algorithm, sizes and checksum. */
DPDEF int  dp_policy_load(dp_policy *p, const char *path, dp_error *err);
DPDEF int  dp_policy_load_mem(dp_policy *p, const void *buf, size_t len, const char *name, dp_error *err);

/* Cost of a placement on some runtime (lower is better): the simulator by
   default, or a real executor. order[k] is the k-th op SEL chose. */
typedef int (*dp_cost_fn)(void *ctx, const dp_graph *g, const dp_cluster *c,
                          const int *assign, const int *order, double *cost, dp_error *err);

typedef enum dp_stage { DP_STAGE_IL = 0, DP_STAGE_SIM, DP_STAGE_REAL, DP_STAGE__COUNT } dp_stage;
DPDEF const char *dp_stage_name(dp_stage s);     /* "il", "sim", "real" */

typedef struct dp_episode_info {
    dp_stage stage;
    int      episode;        /* within the stage                            */
    int      episodes;       /* of the stage                                */
    int      graph;          /* index into the training set                 */
    double   cost;           /* makespan (or the cost callback's value)     */
    double   lower_bound;
    double   best;           /* best cost seen on that graph in the stage   */
    double   baseline;       /* running mean before this episode            */
    double   epsilon, lr, loss, entropy;
    double   seconds;        /* since the stage began                        */
    /* diagnostics (DOPPLER; bench/RESULTS.md part 4 reads them) */
    double   sel_entropy, plc_entropy; /* mean per-step entropy of the
                                episode's SEL and PLC softmaxes            */
    double   grad_norm;      /* global norm of its update's gradient,
                                before clipping                            */
    double   ret_scale;      /* REINFORCE: mean |return| over its steps
                                (each step's own with the per-step
                                baseline): the scale of the advantage      */
    double   parent_share;   /* share of its PLC choices, among ops with
                                inputs, that put the op on a device that
                                holds one of its inputs                    */
    double   expert_xent;    /* mean over its choices (SEL and PLC) of
                                -log P(the cp expert's choice): how far
                                the policy is from its teacher             */
    double   anchor_weight;  /* the anchor's weight w in its update
                                (dp_train_opts.anchor)                     */
    double   ppo_clipped;    /* PPO: share of its update's choices whose
                                term was clipped in the last epoch         */
    double   critic_loss;    /* dp_train_opts.critic: the critic's loss on
                                its update's episodes, before its step     */
} dp_episode_info;

/* dp_train_opts.op_restart's default (batches without a new best). */
#define DP_OP_RESTART 8

typedef struct dp_train_opts {
    int      episodes[DP_STAGE__COUNT]; /* 0 = skip the stage               */
    double   lr[DP_STAGE__COUNT];       /* 0 -> 1e-3, 5e-4, 5e-4 (the reference: 1e-3, 1e-4, 1e-4; see bench/RESULTS.md) */
    double   eps_start[DP_STAGE__COUNT];/* 0 -> 1.0, 0.05, 0.05; < 0 -> none;
                                           decays linearly to 0             */
    double   lr_final;       /* lr decays linearly to lr * this; 0 -> 0.1   */
    double   entropy;        /* bonus weight; 0 -> 1e-3, < 0 -> none         */
    double   anchor;         /* DOPPLER, REINFORCE stages: a bound X on the
                                policy's distance from the cp expert, the
                                mean over its choices of -log P(expert's
                                choice). Stage il's loss is added with a
                                weight w, the constraint's multiplier: after
                                each update w <- max(0, w + anchor_rate
                                (x - X)), x the update's mean, so w is 0
                                while the policy keeps within X and grows
                                when it drifts past (saturated logits, a
                                collapse onto one device). 0 -> 4 nats;
                                < 0: none (the paper's REINFORCE)          */
    double   anchor_rate;    /* 0 -> 1e-3                                  */
    int      select;         /* DOPPLER, REINFORCE stages: every `select`
                                episodes (and at the stage's start and end)
                                the greedy placement of every training graph
                                is simulated, and the stage ends with the
                                parameters whose mean greedy cost / lower
                                bound was lowest (model selection: the
                                stage cannot leave the policy's own answer
                                worse than it found it, by the stage's own
                                cost: in stage real with a cost callback,
                                each evaluation is a call, a run). 0 ->
                                every E / 20 episodes; < 0: none.
                                A stage that on_episode stops still ends
                                with the selection; one that fails does
                                not (the policy is as after the last good
                                update)                                    */
    double   gamma;          /* discount; 0 -> 1 (the paper: 0.99)          */
    double   clip;           /* global gradient-norm clip; 0 -> 1.0         */
    double   baseline_decay; /* running mean weight; 0 -> 0.9 (EMA)         */
    dp_order order;          /* runtime order; PRIORITY uses SEL's order    */
    const dp_cluster *const *clusters; /* per training graph i, the cluster
                                it is placed on (a family over several
                                device counts or units); NULL, or a NULL
                                entry: dp_train's c                        */
    dp_cost_fn cost;         /* stage "real" only; NULL -> the simulator    */
    void    *cost_ctx;
    uint64_t seed;
    const char *start;       /* Placeto: the method whose placement every
                                episode starts from; NULL -> "cp"           */
    int      placeto_reinforce; /* Placeto's update. 0: the one-step
                                improvement (beyond the paper; see >>placeto):
                                at every step of a sweep the visited op is
                                simulated on every device (D - 1 more
                                simulations), and the policy is moved toward
                                q_d = p_d e^(r_d / tau) / Z, r_d the decrease
                                in makespan that moving it to d gives, over
                                the starting makespan; the sweep follows the
                                policy's most likely device (eps: a random
                                one); gamma is unused. 1: the paper's
                                REINFORCE over sampled sweeps, each move's
                                return its discounted later decreases      */
    double   placeto_tau;    /* tau of the one-step improvement; 0 -> 0.01  */
    int      rollouts;       /* DOPPLER: episodes of one graph per update,
                                each one's baseline the mean cost of the
                                others (leave one out); 0 -> 1: an update
                                per episode, the baseline the running mean.
                                The rollouts share one forward pass and one
                                encoder backward pass.                      */
    /* DOPPLER, REINFORCE stages (sim, real): */
    double   temperature;    /* softmax temperature of the sampled rollouts
                                (and of their gradients); 0 -> 1.
                                Greedy choices do not depend on it          */
    int      greedy_baseline;/* 1: every update also rolls out the policy
                                greedily (one more cost evaluation, counted
                                in simulations) and its cost is the
                                baseline of the update's episodes (Kool et
                                al. 2019); 0: as described at rollouts     */
    double   self_imitation; /* weight w of a self-imitation term (Oh et
                                al. 2018): every update also replays the
                                best placement found so far on the graph
                                and adds its REINFORCE gradient with return
                                w max(0, baseline - best) / baseline (only
                                while the best beats the baseline); 0 -> none */
    int      step_baseline;  /* DOPPLER: the per-step baseline (see the
                                section's header; with rollouts K > 1, b_t
                                is the other K - 1 rollouts' mean; not with
                                greedy_baseline); 0 -> on where the cost is
                                the simulator's, off for dp_train_opts.cost
                                (whose units may not be the cluster
                                model's); 1: on; -1: off                    */
    int      adv_norm;       /* 1: returns divided by the root of a running
                                mean of their squares (per graph, decay
                                baseline_decay), so that their scale stays
                                near 1 as costs converge                    */
    int      ppo_epochs;     /* DOPPLER, REINFORCE stages: 0 or 1 -> one
                                gradient step per update (REINFORCE, the
                                paper's); E > 1: PPO's clipped objective
                                (Schulman et al. 2017), E - 1 more steps per
                                update, each over the update's episodes
                                (rollouts of them) replayed under the
                                parameters as they then are, each choice's
                                REINFORCE term times its probability ratio
                                r = p_now / p_rollout and dropped where
                                min(r A, clip(r, 1 - ppo_clip, 1 + ppo_clip)
                                A) is flat in r (A: the choice's return),
                                and for A < 0 past r = 3 (the dual clip);
                                at most 64                                 */
    double   ppo_clip;       /* 0 -> 0.2                                    */
    int      critic;         /* DOPPLER, REINFORCE stages with the per-step
                                baseline: 1 -> b_t is a learned critic's
                                (a linear value function of the partial
                                schedule's state, shared by every graph;
                                see dp__critic_state) instead of the
                                running mean of cost - phi_t per graph and
                                step (or the other rollouts' mean); it is
                                fitted by least squares to each episode's
                                cost still to come (Adam at critic_lr). It
                                lives for one dp_train call (not saved)    */
    double   critic_lr;      /* 0 -> 1e-2                                   */
    double   op_logits;      /* DOPPLER on one graph: > 0 -> stages sim and
                                real learn per-op logits (dp_policy's
                                op_table) instead of the network's weights,
                                which stay as they are, by the cross-entropy
                                method at this rate (3 in bench/RESULTS.md):
                                where the policy has no table for this graph
                                and cluster, it starts at op_prior on the
                                device of the network's placement (greedy +
                                64 samples, seed) and 0 on the others; each
                                episode draws every op's device from its
                                softmax p_v; after each op_batch episodes
                                theta_v += op_logits sum_k u_k (onehot(a_k)
                                - p_v), u_k = 1 / op_elite - 1 / op_batch
                                for the op_elite cheapest, - 1 / op_batch
                                for the others. The stage ends with the
                                table centred on the best placement found
                                (op_prior on its devices, as anneal returns
                                its best). The per-op policy of Post (Gao
                                et al., NeurIPS 2018) with the network's
                                answer as its start. 0 -> none             */
    double   op_prior;       /* the start's logit on its device; 0 -> the
                                one at which a sample moves 3 ops on
                                average: ln((D - 1) (n / 3 - 1)), at
                                least 1 (n ops, D devices)                 */
    int      op_batch, op_elite; /* 0 -> 32 episodes per step, 0 -> the 2
                                cheapest of them pulled toward           */
    int      op_restart;     /* after this many batches in a row without a
                                new best placement, the table starts again
                                at op_prior on the best one's devices (the
                                cross-entropy method converges, then
                                draws one placement again and again);
                                0 -> DP_OP_RESTART (8), < 0 -> never       */
    /* Optional outputs, per training graph i: the best placement any
       episode reached (the search of DOPPLER's deployment stage), over the
       stages scored alike (il and sim; real restarts it when it has its
       own cost): best_cost[i], best_assign[i] and best_order[i] (n_ops
       each; SEL's order, Placeto's visit order). Any may be NULL.        */
    double  *best_cost;
    int    **best_assign, **best_order;
    /* called after every episode; return nonzero to stop training */
    int    (*on_episode)(void *ctx, const dp_episode_info *info);
    void    *on_episode_ctx;
    double   time_limit;     /* seconds from the call, 0 = none: the first
                                episode that ends past it stops training
                                as on_episode does (a stage with selection
                                still ends with it, keeping its best-scored
                                parameters; the later stages do not run),
                                and the result says so (time_limited). The
                                policy is then the one at the stop, the
                                best_* outputs the best found so far. The
                                one source of nondeterminism, off unless
                                asked for                                  */
} dp_train_opts;

typedef struct dp_train_result {
    long   episodes;         /* run, all stages                              */
    long   simulations;      /* cost evaluations                             */
    double seconds;
    double final_cost[DP_STAGE__COUNT]; /* mean cost of the stage's last 10% */
    int    kept[DP_STAGE__COUNT];  /* with selection: the episodes after which
                                      the kept parameters were reached (0:
                                      the stage's start; E: its end); -1:
                                      no selection in that stage           */
    int    time_limited;     /* DP_TIME_LIMITED: opts->time_limit stopped
                                training; 0: it ran every episode (or
                                on_episode stopped it)                      */
} dp_train_result;

/* Trains p on n graphs (one drawn per episode) placed on cluster c, or
   each on its own cluster (dp_train_opts.clusters; c may then be NULL). A
   DOPPLER policy does not depend on the device count; a Placeto policy
   needs every cluster to have its device count. */
DPDEF int dp_train(dp_policy *p, const dp_graph *const *graphs, int n, const dp_cluster *c,
                   const dp_train_opts *opts, dp_train_result *res, dp_error *err);

typedef struct dp_infer_opts {
    int      samples;        /* 0: greedy; K > 0: best of greedy and K samples */
    uint64_t seed;
    dp_order order;          /* how the placement is scored               */
    const char *start;       /* Placeto: the starting placement's method; NULL -> "cp" */
    int      polish;         /* 0: none; P > 0: the policy's answer is then
                                improved by enumopt's local search (see
                                dp_place) for at most P passes: each op, by
                                decreasing b-level, tried on every other
                                device, a strict gain kept. Scored as the
                                placement is (SEL's order under PRIORITY).
                                The policy's placement is a better start
                                for it than cp's (bench/RESULTS.md part 4) */
    long    *simulations;    /* optional output: the simulations made      */
    int     *fallback;       /* optional output: 1 when the best single
                                device that fits was returned (it beat the
                                policy's placement, or the policy found
                                none within memory), as dp_place; 2 when
                                every placement of the policy met a memory
                                dead end and pipeline's (dp_place's, which
                                packs tightest) was returned (polished
                                with polish); 0: the policy's own          */
    int      no_fallback;    /* 1: the policy's own answer, as dp_place_opts */
    double   time_limit;     /* seconds from the call, 0 = none: no sample
                                is begun past it (the greedy placement
                                always is), and the polish stops at it as
                                dp_place's search does (the best so far)   */
    int     *time_limited;   /* optional output: DP_TIME_LIMITED when
                                time_limit stopped the samples or the
                                polish, else 0                             */
    /* called about once a second while it samples and polishes (NULL:
       never), with ctx, the step ("samples"; "polish"; dp_policy_improve
       also "episodes"), how far it is (samples drawn, simulations,
       episodes), of how many (0: not known ahead, as the polish's) and
       the best makespan so far (HUGE_VAL: none yet). It only reports:
       the placement is the same with it or without it. */
    void   (*progress)(void *ctx, const char *step, long done, long total, double best);
    void    *progress_ctx;
    int      threads;        /* DOPPLER's samples drawn by this many threads
                                at once (0 or 1: the calling thread alone).
                                The same answer with any count: sample k
                                from its own stream, the best the lowest
                                numbered of the least makespan; only
                                *simulations may differ (a sample stopped
                                by the best so far in one run may be
                                simulated in another). With threads,
                                progress is called from any of them, one
                                at a time; a thread the system refuses
                                to start leaves its samples to the others
                                (the same answer). Each thread but the
                                caller's has its own rollout state and
                                simulator (about 95-125 bytes an op on
                                4 devices); the greedy placement is
                                drawn on the calling thread while the
                                others draw samples. The passes before
                                the samples (the graph's features, the
                                network's messages) are split among as
                                many threads, for graphs of 8192 ops or
                                more (the same values on any count). */
} dp_infer_opts;

/* Places g with the policy (either algorithm); order (may be NULL) gets
   SEL's op order, or for Placeto the order it visited the ops in. Placeto
   returns the best placement of its sweep (every step is simulated).
   DOPPLER draws sample k from its own stream (seeded by seed and k), stops
   a sample once its most loaded device or its longest path (transfers
   counted) passes the best makespan so far, and simulates only the rest
   (the others cannot be better): the same answer as simulating all, with
   fewer simulations; opts->threads draws several samples at once, with
   the same answer. With opts->polish the answer is then improved by
   local search (never made worse). */
DPDEF int dp_policy_place(const dp_policy *p, const dp_graph *g, const dp_cluster *c,
                          const dp_infer_opts *opts, int *assign, int *order,
                          double *makespan, dp_error *err);

/* Plot of cost / lower bound per episode, stage boundaries marked. */
DPDEF int dp_curve_svg(const char *path, const dp_episode_info *rec, int n, const char *title, dp_error *err);
/* The same records as CSV, one row per episode after the header
       stage,episode,graph,cost,lower_bound,ratio,best,epsilon,lr,loss,entropy,seconds
   (ratio: cost / lower_bound; 1 when both are 0, inf when only the bound
   is), written by the library's output rule (dp_write_file). */
DPDEF int dp_curve_csv(const char *path, const dp_episode_info *rec, int n, dp_error *err);

/* SEL's op order as a runtime priority, as dp_train and dp_policy_place
   score a placement under DP_ORDER_PRIORITY: the k-th of the n ops chosen
   (order[k]) gets priority n - k, so the first chosen runs first among
   ready ops. prio has n entries. */
DPDEF void dp_order_to_priority(const int *order, int n, double *prio);

/* Training stages from text, as 'doppler train' takes them: stages a list
   of il, sim, real, each once and in that order (NULL -> "il,sim");
   episodes one count of at least 1 per listed stage (NULL -> 2000 each);
   lr one positive rate for every listed stage or one per listed stage
   (NULL -> the library's defaults, 0). Sets opts->episodes (0 for a stage
   not listed) and opts->lr and nothing else; on a fault returns
   DP_ERR_PARSE (not a list, an unknown stage, a count or rate that is not
   a number, too many or too few of them) or DP_ERR_RANGE (0 episodes, a
   rate not above 0) with a message that starts with the list's name and
   quotes the value, e.g. "stages: unknown stage 'foo' (il, sim, real)",
   and leaves opts as it was. */
DPDEF int dp_train_stages_parse(dp_train_opts *opts, const char *stages, const char *episodes,
                          const char *lr, dp_error *err);

/* DOPPLER's deployment stage: a copy of p is trained for opts->episodes
   more REINFORCE episodes (stage sim, dp_train's defaults otherwise) on g
   alone, then places g (best of its greedy placement and opts->samples
   samples, as dp_policy_place); assign, order (may be NULL) and makespan
   get the best placement any of those episodes or placements reached
   (simulations: episodes, the selection's greedy scores, at most samples
   + 1), improved by local search with opts->polish. p is not changed.
   Either algorithm (Placeto: from opts->start). */
typedef struct dp_improve_opts {
    int      episodes;       /* 0 -> 100                                   */
    int      samples;        /* of the tuned policy, as dp_infer_opts      */
    uint64_t seed;           /* of training and of the samples             */
    dp_order order;          /* how placements are scored                  */
    const char *start;       /* Placeto: the starting placement's method   */
    int      polish;         /* then local search from the best placement,
                                as dp_infer_opts.polish                    */
    double   op_logits, op_prior; /* DOPPLER: as dp_train_opts (the episodes
                                learn per-op logits from the policy's
                                placement instead of tuning the network)  */
    int      op_restart;     /* as dp_train_opts                            */
    long    *simulations;    /* optional output: the simulations made (the
                                training's, the placement's, the polish's) */
    int     *fallback;       /* optional output, as dp_infer_opts           */
    int      no_fallback;    /* as dp_infer_opts                            */
    double   time_limit;     /* seconds from the call for all of it, 0 =
                                none: the episodes stop past it (as
                                dp_train_opts.time_limit; the best
                                placement they reached is kept), then the
                                tuned policy's greedy placement, no sample
                                begun past it, the polish stopped at it   */
    int     *time_limited;   /* optional output, as dp_infer_opts           */
    void   (*progress)(void *ctx, const char *step, long done, long total, double best);
    void    *progress_ctx;   /* as dp_infer_opts (steps "episodes",
                                "samples", "polish")                        */
    int      threads;        /* the tuned policy's samples, as dp_infer_opts */
} dp_improve_opts;
DPDEF int dp_policy_improve(const dp_policy *p, const dp_graph *g, const dp_cluster *c,
                      const dp_improve_opts *opts, int *assign, int *order,
                      double *makespan, dp_error *err);

/* ======================================================================
   >>api-exec
   The CPU executor runs a placed graph for real on threads, on the
   dispatcher below (dp_dispatch's, with hooks, as the CUDA executor
   does): one compute worker per device and one copy worker per device
   (copies into it; a copy is made at once, and delivered at its modelled
   arrival, so transfers overlap as in the simulator, FREE or SERIAL
   links alike; a compute worker between ops makes the copies into its
   device that are still waiting for the copy worker), work-conserving
   (a device never idles while one of its ops is ready),
   FIFO or priority order, exactly as the simulator's runtime model.
   Every op owns an output buffer on its device; a transfer is a real copy
   into a buffer of the destination device; a buffer is freed when its last
   consumer is done (sinks' outputs stay until the run ends).
   Real ops (kind other than opaque, with a shape) run their kernel (see
   the kernels section) on float32 tensors of their shape; their copies are
   delivered as soon as the memcpy is done. Opaque ops (DOPPLER files, STG,
   generated DAGs) busy-compute on an output buffer of out_bytes *
   bytes_scale bytes for their modelled time (dp_op_time on their device,
   times seconds_per_unit), and their copies arrive at their modelled time
   (latency + bytes / bandwidth, times seconds_per_unit), so any graph can
   be executed and compared with the simulator.
   The worker threads are started once per call and reused by every run;
   a run's wall time runs from waking them to the end of its last op.
   Freed buffers are kept per device for reuse within the call.
   Output check: every op's output is a deterministic function of its
   inputs' contents (a checksum chain), so equal dp_exec_result.digest
   across placements means every op saw the same inputs.
   ====================================================================== */
/* How an executor issues a placed graph's ops (dp_exec_opts.dispatch).
   DYNAMIC is the runtime model: each device takes its next ready op when
   it is free (FIFO or priority), work-conserving on the real times.
   STATIC (CUDA only) enqueues the whole run up front: the simulator's
   schedule for the placement gives each logical device its op order and
   every cross-device edge its copy; events carry the dependencies, so the
   host never waits between ops and the GPU runs each stream back to back.
   The order is the simulator's, not re-decided on the real times, and
   every buffer is held to the end of the run (its peak_bytes: all of
   them; device_bytes is checked against that before anything runs).
   GRAPH (CUDA only): STATIC's sequence captured once as a CUDA graph and
   replayed by one cudaGraphLaunch per run: the host's cost per op is
   gone, a lower bound on what dispatch can cost. */
typedef enum dp_dispatch_mode { DP_DISPATCH_DYNAMIC = 0, DP_DISPATCH_STATIC, DP_DISPATCH_GRAPH } dp_dispatch_mode;
/* The arithmetic of matmul kernels (every other kernel computes in FP32).
   DEFAULT: the CUDA executor's TF32 tensor cores where every GPU used has
   compute capability 8.0+ and the binary has sm_80+ code for it (build.sh:
   DP_NVCC_ARCH, or its default compute_80 PTX), else FP32. FP32: the exact
   FP32 kernel (products summed in k order with fmaf, as the CPU's). TF32:
   inputs rounded to TF32 (cvt.rna: to nearest, ties away, 10 explicit
   mantissa bits), products exact, FP32 accumulation (mma.m16n8k8). BF16:
   inputs rounded to bfloat16 (to nearest even, 7 mantissa bits), FP32
   accumulation (mma.m16n8k16); inputs and outputs stay float tensors.
   TF32 or BF16 where the tensor-core path is missing: DP_ERR_DEVICE. The
   CPU executor takes all four: DEFAULT is FP32 there; TF32 and BF16 are
   emulated: every element of a matmul's inputs rounded exactly as the
   tensor cores round it (bit for bit the same values), then its FP32
   loop (products of rounded inputs are exact in FP32), so that it is the
   reference for a CUDA run in that precision (the two then differ by the
   order of FP32 sums and what follows from it, see dp_exec_tolerance). The MPI executor takes
   DEFAULT and FP32 only (DP_ERR_ARG) on CPUs, all four on GPUs (as the
   CUDA executor; DEFAULT must resolve alike on every rank). dp_matmul_err_bound gives the
   error bound of each against the exact product. */
typedef enum dp_precision { DP_PREC_DEFAULT = 0, DP_PREC_FP32, DP_PREC_TF32, DP_PREC_BF16 } dp_precision;
#define DP_PREC__COUNT 4
/* "default", "fp32", "tf32", "bf16"; "?" out of range. */
DPDEF const char *dp_precision_name(int p);
/* The matmul's error against the exact product, per element: |C'ij - Cij|
   <= dp_matmul_err_bound(p, K) * sum_k |Aik| |Bkj| (p FP32, TF32 or BF16;
   DEFAULT counts as TF32, the larger of the two). Derivation: each input
   rounded with relative error <= u (TF32: u = 2^-11, BF16: 2^-8, FP32 none:
   0) makes |a'b' - ab| <= (2u + u^2)|a||b|; the products are then summed in
   FP32 in an order the hardware does not specify, so the worst case of
   recursive summation, gamma_K = K u32 / (1 - K u32) with u32 = 2^-24,
   times sum |a'||b'| <= (1 + u)^2 sum |a||b|. Hence
   (2u + u^2) + gamma_K (1 + u)^2; the FP32 kernel's fused multiply-adds
   are within gamma_K. Two results (GPU against CPU) differ by at most the
   sum of their two bounds. HUGE_VAL when K u32 >= 1. */
DPDEF double dp_matmul_err_bound(int p, long long K);

typedef struct dp_exec_opts {
    dp_order order;            /* FIFO or PRIORITY (priority NULL -> b-level) */
    const double *priority;
    int      reps;             /* runs; 0 -> 1; the result is their median  */
    double   seconds_per_unit; /* 0 -> the graph's single-device time is 0.1 s */
    double   bytes_scale;      /* 0 -> largest buffer at most 64 KiB         */
    double   device_bytes;     /* per-device arena limit; 0 -> the cluster's
                                  memory (0 there too = none); a run that
                                  overflows it fails with DP_ERR_INFEASIBLE */
    uint64_t seed;             /* contents of the input tensors              */
    int      cpu_times;        /* 1: fill dp_exec_result.cpu (two thread-CPU
                                  clock reads per op: a system call, ~2 us on
                                  some VMs, so off by default); 0: cpu NULL  */
    int      keep_outputs;     /* nonzero: dp_exec_result.outputs gets the
                                  output of every real sink op (last run)    */
    int      gpus;             /* CUDA: use GPUs 0..gpus-1 (0 = all present);
                                  logical device d runs on GPU d % gpus. The
                                  CPU executor ignores it                    */
    dp_dispatch_mode dispatch; /* CUDA: DYNAMIC (0, dp_dispatch: one op per
                                  device at a time, the host launching each
                                  as the runtime model picks it) or STATIC
                                  (every op enqueued at once, each device's
                                  in the simulator's order) or GRAPH (that,
                                  as a CUDA graph); CPU: DP_ERR_ARG         */
    int      link_pacing;      /* CUDA, copies between logical devices on
                                  one GPU: 0 (default) or 1: paced, each
                                  takes the cluster's link time (latency +
                                  bytes / bandwidth of its pair, at most
                                  60 s: a real op's buffer bytes in the
                                  cluster's units as seconds, an opaque
                                  op's graph bytes x seconds_per_unit) on
                                  the GPU's clock; -1: off, on-GPU copies at
                                  their own speed. Copies between GPUs are
                                  never paced; the CPU executor ignores it */
    const struct dp_mpi_opts *mpi; /* dp_exec_mpi's communicator and timeout
                                  (NULL: MPI_COMM_WORLD, the default
                                  timeout; see >>api-mpi); others ignore it */
    dp_precision precision;    /* matmul arithmetic (see dp_precision): CUDA
                                  any; CPU any (TF32, BF16: the tensor
                                  cores' input rounding emulated, FP32
                                  sums; DEFAULT: FP32); MPI DEFAULT or FP32
                                  (on GPUs, DP_MPI_CUDA: as CUDA)          */
} dp_exec_opts;

typedef struct dp_exec_result {
    int     n_ops, n_devices, reps;
    double  wall_median;       /* seconds                                    */
    double *wall_runs;         /* [reps]                                     */
    double *busy;              /* [n_devices] seconds, median run            */
    double *start, *end;       /* [n_ops] seconds from the run's start, median run */
    double *cpu;               /* [n_ops] the op's thread CPU seconds, median run
                                  (below end - start: the thread was preempted);
                                  NULL unless opts.cpu_times */
    double *peak_bytes;        /* [n_devices] highest bytes held, median run */
    uint64_t digest;           /* checksum of every op's output (CUDA: of
                                  every sink's, see >>api-cuda)              */
    double  seconds_per_unit, bytes_scale;  /* the scales used               */
    float **outputs;           /* [n_ops] with keep_outputs: real sinks' outputs
                                  (rows x cols floats, row-major); NULL for
                                  every other op, and without keep_outputs  */
    int     gpus;              /* CUDA: GPUs the logical devices ran on; 0 CPU */
    int     precision;         /* the dp_precision matmuls ran in (DEFAULT
                                  resolved: FP32, TF32 or BF16)             */
    int     sharing;           /* CUDA: DP_SHARING_NONE (0: each logical device
                                  has a GPU of its own; CPU), _PARTITIONS
                                  (1: logical devices that share a GPU each
                                  have a green context of their own SMs),
                                  _SHARED (2: some GPU is shared without
                                  partitions, see sharing_note)           */
    int    *sms;               /* [n_devices] CUDA: the SMs each logical
                                  device's launches may use (its partition's,
                                  or its GPU's when not partitioned); NULL CPU */
    char    sharing_note[160]; /* CUDA, DP_SHARING_SHARED: why no partitions
                                  (e.g. the driver has no green contexts) */
} dp_exec_result;
enum { DP_SHARING_NONE = 0, DP_SHARING_PARTITIONS = 1, DP_SHARING_SHARED = 2 };

DPDEF int  dp_exec_cpu(const dp_graph *g, const dp_cluster *c, const int *assign,
                       const dp_exec_opts *opts, dp_exec_result *res, dp_error *err);
DPDEF void dp_exec_result_free(dp_exec_result *res);

/* A runtime as a training cost (stage real's dp_train_opts.cost): set
   cost = dp_runtime_cost and cost_ctx = a dp_runtime. With exec NULL the
   cost is the simulator's makespan, exactly as dp_train scores a placement
   (a workspace per call); with an executor (dp_exec_cpu, dp_exec_cuda from
   doppler_cuda.cu, or any function of this signature: the header cannot
   name the CUDA one for you, as a program without the .cu has no such
   symbol) it is the median wall time of reps runs, in the graph's time
   units: divided by seconds_per_unit when the graph has opaque ops (they
   run seconds_per_unit per unit), as measured otherwise (real ops' units
   are a calibrated cluster's seconds). Under DP_ORDER_PRIORITY the
   priority is SEL's order (dp_order_to_priority). A NULL ctx: the
   simulator, FIFO order. */
typedef int (*dp_exec_fn)(const dp_graph *g, const dp_cluster *c, const int *assign,
                          const dp_exec_opts *opts, dp_exec_result *res, dp_error *err);
typedef struct dp_runtime {
    dp_exec_fn exec;         /* NULL: the simulator                        */
    dp_order   order;
    int        reps;         /* executor runs per cost, median; 0 -> 1     */
    const dp_exec_opts *exec_opts; /* the executor's other options (NULL:
                                defaults); order, priority and reps are
                                this struct's                              */
} dp_runtime;
DPDEF int dp_runtime_cost(void *ctx, const dp_graph *g, const dp_cluster *c, const int *assign,
                    const int *order, double *cost, dp_error *err);
/* Outputs of two runs of g (keep_outputs in both; got against the
   reference ref): max_err gets the largest |got - ref| over every element
   of every real sink, divided by that tensor's largest |ref| (1 when it is
   0); worst_op (may be NULL) the op where it is. NaN against a number
   counts as infinite. DP_ERR_ARG when an output is missing in either. */
DPDEF int  dp_exec_compare(const dp_graph *g, const dp_exec_result *got, const dp_exec_result *ref,
                           double *max_err, int *worst_op, dp_error *err);
/* The tolerance of dp_exec_compare between the CUDA and the CPU executor:
   both compute in float32, but the GPU sums matmul products with fused
   multiply-adds, softmax and norm rows in another order (32 lane partial
   sums, then a butterfly), and its expf/tanhf differ from libm's by an ulp
   or two. Such errors scale with the magnitude of the terms summed, i.e.
   with the tensor's scale, not with each element (a near-zero element from
   cancellation carries the same absolute error). Measured with the GPU's
   algorithms run on the host (tests/test_cuda.c): 2e-7 to 3e-7 for one
   matmul, softmax or norm; 4e-7 for graphs/chainmm and ffnn; 3e-5 to 4e-5
   for graphs/llama_block and llama_layer, where a softmax over large
   logits turns the rounding of a logit into a relative error of its
   exponential; 3e-4 for 8 llama blocks. Deeper or wider attention stacks
   with unnormalised weights can exceed it. */
#define DP_EXEC_TOL 1e-3
/* The same comparison's tolerance for a CUDA run in precision p (its
   dp_exec_result.precision) against a CPU run in the SAME precision (the
   CPU executor rounds TF32 and BF16 matmul inputs as the tensor cores
   do): DP_EXEC_TOL for FP32, 1e-2 for TF32, 8e-2 for BF16. Derivation:
   the two runs' matmuls start from bit-identical graph inputs, round them
   identically and form exact products, so at first they differ only in
   the order of FP32 sums, as in FP32 (DP_EXEC_TOL). But once an input of
   a later matmul differs by a relative d (that order), its rounding can
   fall on the other side of a rounding boundary, with probability about
   d / U, and then differs by one spacing U of the format (TF32 2^-10,
   BF16 2^-7 relative): such jumps, of random sign, add up over a dot
   product of K terms to about sqrt(d U) of its scale rather than d, and
   repeated through layers the difference tends towards U itself, times
   the graph's amplification (softmax over large logits, norms), which
   DP_EXEC_TOL allows for FP32 with a margin of about 25 over llama_block's
   measured 4e-5. Hence 10 U = 20 u (u = U / 2, the rounding's unit):
   1e-2 (TF32) and 8e-2 (BF16). Measured with the GPU's algorithms on the
   host against the CPU executor in the same precision (tests/test_cuda.c):
   TF32 2e-4 (chainmm), 7e-5 (ffnn), 6e-4 (llama_block), 2.2e-3
   (llama_layer); BF16 3e-5, 2.5e-4, 9e-4, 2.1e-3. Against an FP32 CPU
   run the inputs' rounding itself shows (llama_block in TF32: 1.2e-2 on
   an H200) and no tolerance of this kind bounds it. */
DPDEF double dp_exec_tolerance(int p);

/* The executors' defaults, for any executor: a zero *seconds_per_unit
   becomes the scale at which the graph's single-device time (each op on its
   fastest device) is 0.1 s; a zero *bytes_scale the one at which the
   largest buffer is at most 64 KiB (1 when it already is). */
DPDEF void   dp_exec_scales(const dp_graph *g, const dp_cluster *c, double *seconds_per_unit, double *bytes_scale);
/* Bytes of op's output buffer (real ops: rows x cols floats; opaque ops:
   out_bytes x bytes_scale rounded, at least 8), and of edge's copy (real
   source: its output; opaque: bytes x bytes_scale rounded, at least 8). */
DPDEF size_t dp_exec_op_bytes(const dp_graph *g, int op, double bytes_scale);
DPDEF size_t dp_exec_edge_bytes(const dp_graph *g, int edge, double bytes_scale);
/* The contents of input op `op` at flat index i for a seed: uniform in
   [-1, 1), integer hashing then one float conversion (the CUDA executor's
   fill reproduces it bit for bit). */
DPDEF float  dp_input_value(uint64_t seed, int op, size_t i);

/* The dispatcher of the runtime model, for executors that bring their own
   devices (doppler_cuda.cu is one; tests drive it with a simulated device).
   dp_dispatch runs g once under assign on one thread, on the simulator's
   state machine (>>runtime): it keeps the counts of inputs still to
   arrive, one ready queue per device (FIFO or priority, opts->order and
   opts->priority, NULL -> b-level), starts an op on every idle device
   that has one ready (in the simulator's order: the device last woken by
   an op's end or a new ready op first), issues a copy of every
   cross-device edge when its producer ends, delivers a copy when it
   completes or, out of an opaque op, at its modelled arrival (issue +
   latency + bytes / bandwidth, times opts->seconds_per_unit; SERIAL links
   one transfer at a time per device pair), releases an op's output when
   its local consumers and its copies are done and a copy when its consumer
   is done (sinks' outputs are kept), and accounts each device's bytes
   (dp_exec_op_bytes, dp_exec_edge_bytes at opts->bytes_scale) against
   opts->device_bytes (0 -> the cluster's memory): overflow is
   DP_ERR_INFEASIBLE. The hooks do the work, each returning 0 or a dp_code
   (with err filled):
     now      seconds on a monotonic clock;
     launch   start op on dev: its inputs are there (own device: the
              producer's output; another: edge's copy), allocate its output;
     copy     start edge's copy into the consumer's device (the producer
              has ended): allocate it, copy;
     release  free op's output (edge -1) or edge's copy (op -1);
     wait     block until completions are there or until `deadline`
              (seconds of now(); < 0: none); write up to max of them into
              done (an op v as v, an edge e's copy as -1 - e) and their
              count into *count (0 only when the deadline passed).
   All completions returned by one wait are applied before any device
   picks its next op. peak_bytes (may be NULL) gets each device's highest
   bytes held. The hooks' context is theirs; the dispatcher allocates its
   workspace per call and frees it before returning, also on failure
   (buffers still held then are the caller's to free). */
typedef struct dp_dispatch_hooks {
    void  *ctx;
    double (*now)(void *ctx);
    int    (*launch)(void *ctx, int op, int dev, dp_error *err);
    int    (*copy)(void *ctx, int edge, dp_error *err);
    int    (*release)(void *ctx, int op, int edge, dp_error *err);
    int    (*wait)(void *ctx, double deadline, int *done, int max, int *count, dp_error *err);
} dp_dispatch_hooks;

DPDEF int dp_dispatch(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *opts,
                      const dp_dispatch_hooks *hooks, double *peak_bytes, dp_error *err);

/* Checks the shapes of every real (non-opaque) op against its inputs;
   opaque ops are skipped. The executor runs real ops with the kernels of
   the kernels section and opaque ones as busy kernels. */
DPDEF int dp_graph_check_tensors(const dp_graph *g, dp_error *err);

/* ======================================================================
   >>api-cuda
   Implemented in doppler_cuda.cu (compiled by nvcc, linked in only by
   programs that want the GPU); declared here so that one header serves.
   The .cu includes this header without the implementation: link it with
   one C file that defines DOPPLER_IMPLEMENTATION (it calls dp_check,
   dp_dispatch, dp_op_time and other public functions). One command:
       nvcc -O2 -I. -o prog prog.c doppler_cuda.cu -lpthread
   (nvcc compiles prog.c as C with the host compiler). These functions
   are always extern (no DPDEF): doppler_cuda.cu defines them, and needs
   the library extern (not DOPPLER_STATIC).
   A failed CUDA call is reported as DP_ERR_DEVICE with
   "doppler_cuda.cu:LINE: CALL: MESSAGE (cudaErrorName)". A machine with no
   GPU or driver makes every call that needs one fail with DP_ERR_DEVICE and
   the runtime's reason ("no CUDA device: ..."); arguments are checked
   before the GPU is touched.

   dp_exec_cuda runs a placed graph on the GPUs with the dispatcher of the
   runtime model (dp_dispatch): logical device d of the cluster runs on GPU
   d % G (G = opts->gpus, 0 -> every GPU present); logical devices sharing a
   GPU each run in a green context of their own SMs (res->sharing
   DP_SHARING_PARTITIONS; res->sms: each one's SMs): the GPU's SM resource
   split by dp__cu_partition in proportion to the devices' speeds (equal
   speeds: equal parts; a device's speed is its `speed`, or with per-kind
   speeds or curves the geometric mean over the kinds of the speed at the
   curve's largest work, else the kind's speed, else `speed`), each part
   rounded down to the GPU's alignment and at least its minimum, the SMs
   left over unused; its compute stream is made in it, each launch capped to
   the partition's resident blocks. The driver's green-context functions
   are found through cudaGetDriverEntryPointByVersion (no -lcuda; a 12.5
   or later driver). Where that cannot be (no such driver, a GPU without SM
   partitioning, more devices than minimum partitions, a failed call), the
   GPU is shared as before (DP_SHARING_SHARED, res->sharing_note says why):
   one compute stream each, each launch capped to the GPU's resident blocks
   divided by the logical devices on it (a share, the hardware placing the
   blocks). One op at a time per logical device. A cross-device edge is a
   copy on a stream of its own per (source, destination) pair, made on the
   destination's GPU after the producer's event (cudaMemcpyPeerAsync between
   GPUs, at their own speed: direct where cudaDeviceCanAccessPeer allows, the
   buffer pools being opened to such peers, else staged by the runtime).
   Between logical devices of one GPU (opts->link_pacing 0 or 1) the copy is
   a kernel that lasts the cluster's link time, latency + bytes / bandwidth
   of the pair (a real op's copy: the bytes its buffer has, the cluster's
   units read as seconds, as a calibrated cluster's; an opaque op's: the
   graph's bytes, x seconds_per_unit, its modelled arrival), measured on
   the GPU's %globaltimer; one copy at a time per pair (the pair's stream).
   Under DP_LINK_SERIAL its time runs from its first block's start (after
   the pair's previous copy), as the simulator's; under DP_LINK_FREE, where
   the simulator overlaps a pair's transfers, from its producer's end, so
   that waiting behind another copy costs nothing the model does not. Its
   stream is the primary context's, so that it does not wait for SMs
   behind the destination's kernels. link_pacing -1: a plain
   device-to-device copy. Completion: dynamic dispatch polls an event per
   op and copy; static and graph dispatch wait for the streams. Buffers come from one stream-ordered
   memory pool per GPU, made and destroyed by each call. Real ops run CUDA
   kernels with the semantics of the CPU kernels (>>kernels; outputs within
   DP_EXEC_TOL of the CPU's, see dp_exec_compare); opaque ops hash their
   inputs, write their output and spin on the GPU's global timer for their
   modelled time. Timings come from the kernels' own stamps on the GPU's
   global timer (each op's first block start and last block end), peak
   bytes from the dispatcher's accounting. digest: a checksum of every sink's output read
   back after each run (every op reaches a sink; an opaque op's output is a
   hash of its inputs'), equal across placements of one graph on one GPU
   model, but not equal to the CPU's digest. Same options and result as
   dp_exec_cpu, plus opts->gpus, opts->link_pacing, res->gpus, res->sharing,
   res->sms and res->sharing_note; opts->precision picks the matmul kernel
   (dp_precision: the exact FP32 one, or TF32/BF16 tensor cores, the
   default on sm_80+) and res->precision says which ran.
   ====================================================================== */
typedef struct dp_cuda_info {
    char   name[256];
    int    major, minor;        /* compute capability                     */
    int    multiprocessors;
    double total_bytes;         /* global memory                          */
    double free_bytes;          /* free now                               */
} dp_cuda_info;

int dp_cuda_device_count(int *count, dp_error *err);
int dp_cuda_device_name(int dev, char *buf, int len, dp_error *err);
int dp_cuda_device_info(int dev, dp_cuda_info *info, dp_error *err);
/* y = a*x + y over n doubles on device dev, checked against the host;
   seconds gets the kernel's time (may be NULL). */
int dp_cuda_selftest(int dev, int n, double *seconds, dp_error *err);

int dp_exec_cuda(const dp_graph *g, const dp_cluster *c, const int *assign,
                 const dp_exec_opts *opts, dp_exec_result *res, dp_error *err);
/* The matmul kernel alone on GPU dev: C (r x K times K x c) in the given
   dp_precision (DEFAULT as dp_exec_cuda's), inputs filled as the
   executors fill them (seed 1), 3 launches of warm-up, then reps launches
   each timed with CUDA events around the kernel alone; *seconds gets their
   median, *used the precision that ran (both may be NULL). TF32 or BF16
   where the tensor-core path is missing: DP_ERR_DEVICE. */
int dp_cuda_matmul_time(int dev, int precision, int r, int K, int c, int reps, double *seconds, int *used, dp_error *err);
/* Measures the GPUs into a cluster of opts->devices logical devices (0 ->
   one per GPU; more than the GPUs share them as dp_exec_cuda does), as
   dp_exec_cuda runs ops under opts->dispatch and opts->precision: per op
   kind, a speed curve (kindspeed W:S ..., as dp_calibrate_cpu's) over
   sides 16, 32, ... up to size (size 0 -> 512), each point one
   dp_exec_cuda run of a chain of DP__CUCAL_CHAIN ops of the kind on S x S
   tensors, each consuming its predecessor's output, on every logical
   device at once (input, concat and split: independent ops): the median
   of the ops' end - start (the kernels' stamps), work dp_op_flops; the
   per-op overhead: the median gap from an op's end to its dependent
   successor's start over all the chains of the device (what the
   simulator adds to every op); copy bandwidth between each pair of
   logical devices (peer or on-GPU copies of 16 MiB, for opts->seconds
   each); and dp_exec_cuda's hand-off latency (a chain of tiny ops
   alternating between two logical devices against one on a single one).
   About 16 kinds x sides dp_exec_cuda runs (~100 by default). Logical
   devices that share a GPU are measured in the green-context partitions
   dp_exec_cuda gives them (equal ones: their speeds are what is measured;
   the names say so: "cuda1:gpu0:sm32"), so the cluster has the
   partitions' speeds; the links between them keep the measured on-GPU
   copy figures (TB/s), which dp_exec_cuda's paced copies then
   reproduce. */
int dp_calibrate_cuda(dp_cluster *out, const dp_calibrate_opts *opts, dp_error *err);

/* ======================================================================
   >>api-mpi
   Only where DP_WITH_MPI is defined before this header is included (in
   every file that includes it); mpi.h is then included and the program
   built with MPI's compiler wrapper, one command:
       mpicc -std=gnu11 -O2 -DDP_WITH_MPI -I. -o prog prog.c -lm -pthread
   and run under mpirun, one process (rank) per machine. A program without
   DP_WITH_MPI builds and runs as if this section were not here.
   MPI must be initialised (MPI_Init_thread, any level: only the thread
   that calls these functions calls MPI; the executor's worker threads do
   not). Every function here is collective over the communicator
   (dp_mpi_opts.comm, NULL -> MPI_COMM_WORLD): every rank calls it, with
   the same arguments where it says so. Nothing here blocks without a
   deadline: a rank that waits longer than dp_mpi_opts.timeout for another
   (a message, a collective) fails with DP_ERR_PEER, naming the rank it
   waited for ("it died or stopped answering"); MPI errors are returned on
   the communicators it makes (MPI_ERRORS_RETURN), as DP_ERR_PEER with
   MPI's message. What the program then does is its own: after a
   DP_ERR_PEER, MPI_Finalize may wait for the lost rank, so a program
   should end with MPI_Abort (the CLI does).

   dp_exec_mpi runs a placed graph across the ranks: rank r runs the
   devices of node r of the cluster (dp_cluster.node; cluster files
   'nodes K', CLI --machines K), so the run needs exactly as many ranks as
   the cluster has nodes. Every rank runs the runtime model's dispatcher
   (>>dispatch) on the whole graph: its own devices' ops on worker threads
   with the CPU executor's kernels and buffers (one compute thread per
   device; a copy between two of its own devices is a memcpy made by the
   dispatching thread), and every other rank's ops as if done at once
   (a rank never waits for a remote op, only for the tensors it sends). A
   cross-node edge is an MPI message (tag: the edge's index + 2): a
   non-blocking send from the producer's output when the producer ends
   (out of an opaque op: when its modelled arrival falls due, latency +
   bytes / bandwidth after, serial links in turn, so that a cluster's
   links are emulated as the CPU executor does), and a receive posted on
   the consumer's rank ahead of time, when that rank's dispatcher sees the
   producer done, into the consumer's copy buffer; the consumer may start
   when it has arrived. The dispatching thread polls MPI while it waits
   (MPI_Testsome): yielding the processor between polls while one of its
   devices is idle and messages are awaited (as MPI itself waits), else
   sleeping until an op ends (2 ms at most, for heartbeats and failures),
   so that polling does not take the processors its ops run on.
   Before anything runs, every rank checks its arguments and hashes the
   graph, cluster, assignment and options (MPI_Allgather): a failure on
   any rank, or arguments that differ, fail every rank with the same
   message. An op that fails on a rank during a run (memory, a kernel)
   stops every rank's run at once (a control message), each returning that
   message. Each run starts after a barrier; times are from each rank's
   barrier exit (on one machine one clock; across machines they differ by
   the barrier's skew, microseconds). The result, on every rank: every
   op's start and end, every device's busy time and peak bytes (each
   measured by the rank that runs it), the wall time of each run (the
   latest end over the ranks), and the digest, which equals dp_exec_cpu's
   for the same graph (the same kernels and hash, placement-independent):
   the check that a distributed run computed what one process does. With
   keep_outputs, rank 0 gets every real sink's output (the others their
   own). Same options as dp_exec_cpu (dispatch dynamic only) plus
   opts->mpi.

   On GPUs (dp_mpi_opts.devices DP_MPI_CUDA; the program built with
   DP_WITH_CUDA and linked with doppler_cuda.cu, one command:
       nvcc -ccbin mpicc -O2 -I. -DDP_WITH_MPI -DDP_WITH_CUDA -o prog prog.c doppler_cuda.cu -lm -lpthread -lstdc++
   mpicc as nvcc's host compiler brings MPI's flags, -lstdc++ the C++
   runtime the .cu needs; without DP_WITH_CUDA, DP_MPI_CUDA is
   DP_ERR_ARG) each rank runs its devices with the CUDA executor's
   machinery (doppler_cuda.cu's >>cuda-rank) in place of the compute
   threads: the k-th device of the rank on its GPU k % G (opts->gpus,
   0 -> all), an op launched on its device's stream, copies between two
   of its devices as dp_exec_cuda's (paced on one GPU, opts->link_pacing),
   completions polled from CUDA events (the dispatching thread yields
   between polls, as dp_exec_cuda's). A cross-node edge out of a GPU is
   sent from the producer's output buffer in GPU memory where MPI is
   CUDA-aware (MPIX_Query_cuda_support, asked where Open MPI's mpi-ext.h
   defines MPIX_CUDA_AWARE_SUPPORT; dp_mpi_opts.gpu_direct -1: never),
   else copied into a pinned host buffer on a copy stream after the
   producer's end event and sent once that copy is done; one into a GPU
   is received into the consumer's copy buffer in GPU memory (allocated
   and awaited when the producer's end is seen) or into a pinned buffer,
   then copied to the GPU on the pair's stream; either way the
   dispatcher's completion for the edge comes from that copy's event,
   when the tensor is on the consumer's GPU. The pinned buffers are one
   block per call (cudaMallocHost), an edge's at a 256-byte aligned
   offset (dp__cu_stage_plan). Times: each op's kernels' stamps, on the
   host's clock through the GPU's start stamp; the digest is
   dp_exec_cuda's (the hashes of the sinks' outputs, in op order), equal
   to a single-process dp_exec_cuda run of the same graph at the same
   precision on GPUs of one model (not to dp_exec_cpu's);
   res->precision the precision run (every rank's must agree, else
   DP_ERR_DEVICE on all), res->gpus this rank's GPUs, res->cpu zeros.
   No GPU on a rank: every rank fails with DP_ERR_DEVICE and the lowest
   such rank's "rank R: no CUDA device: <the runtime's reason>". Not yet
   run on a GPU (tests/test_mpi.c has the checks: the digest and outputs
   of dp_exec_cuda, staged and CUDA-aware, and a paced edge). Limits: a message is at most INT_MAX bytes, an edge index
   below the MPI implementation's MPI_TAG_UB; ranks' processors are taken
   to share one byte order and type sizes.

   Stage real across machines: rank 0 calls dp_train with dp_runtime.exec
   = dp_exec_mpi_lead (a dp_exec_fn: it sends each placement, its order,
   priority and the exec options to the other ranks, then runs it with
   them, as dp_exec_mpi), while every other rank calls
   dp_exec_mpi_follow, which runs each placement it receives until rank 0
   calls dp_exec_mpi_stop; a failed run fails the leader and the
   followers with the same message (the followers return it, and
   dp_exec_mpi_stop is then not needed). Between runs (rank 0 may train
   for minutes) rank 0 calls dp_exec_mpi_beat at least every timeout / 2
   (dp_mpi_opts.timeout, 0 -> 60 s; dp_train's on_episode is the place:
   the CLI beats once a second); it sends every follower a byte, which
   it takes as a sign of life. A follower waits for the next placement,
   polling every millisecond, as long as rank 0 shows life: silent for
   the timeout (counted from the last run's end, or the last beat), it
   fails with DP_ERR_PEER naming rank 0 ("it died or stopped
   answering").

   dp_mpi_agree is the agreement the others use, for a program's own
   steps (the CLI after reading its files): every rank passes its own
   status (rc, and err's message when rc is not 0); every rank returns the
   lowest failing rank's code, its message prefixed "rank R: " (err as it
   was when that rank is this one), or 0 when all succeeded.

   dp_mpi_pingpong: ranks 0 and peer bounce a message of `bytes` bytes
   reps times (after 2 rounds of warm-up); *one_way (on every rank) gets
   the median round trip's half. dp_calibrate_mpi: dp_calibrate_cpu's
   cluster for opts->devices devices a node (0 -> 1), measured on every
   rank at once and taken from rank 0's (the machines are taken to be
   alike), repeated for every rank's node, and the links between nodes:
   bandwidth from chains of 256 x 256 tensors alternating between the two
   nodes through dp_exec_mpi (at most what ping-pongs of 4 MiB between
   ranks 0 and 1 give), latency from
   dp_exec_mpi itself (a chain of 1 x 1 ops alternating between the two
   nodes against the same chain on one device: what a hand-off costs the
   executor, MPI's latency and its polling included), and, as every
   device's per-op overhead, that chain's gap between dependent ops on one
   device (the dispatching thread's hand-off to a compute thread and
   back). Every rank gets the cluster. With mo->devices DP_MPI_CUDA the
   nodes' devices are measured by dp_calibrate_cuda (named n<R>gpu<D>)
   and the chains run on the GPUs. */
#ifdef DP_WITH_MPI
/* What a rank's devices are (dp_mpi_opts.devices). */
enum { DP_MPI_CPU = 0, DP_MPI_CUDA = 1 };
typedef struct dp_mpi_opts {
    const MPI_Comm *comm;  /* NULL -> MPI_COMM_WORLD                      */
    double timeout;        /* seconds a rank waits for another before it
                              fails with DP_ERR_PEER; 0 -> 30 s within
                              a run (ranks beat every timeout / 4, so a
                              long op is not silence), 60 s for the steps
                              around one (agreement, a placement, a
                              ping-pong; a follower's wait between runs),
                              600 s for dp_calibrate_mpi                 */
    int devices;           /* DP_MPI_CPU (0): each rank runs its devices
                              on the CPU executor's kernels; DP_MPI_CUDA:
                              on its GPUs (doppler_cuda.cu, a program
                              built with DP_WITH_CUDA; see above); the
                              same on every rank                         */
    int gpu_direct;        /* DP_MPI_CUDA: 0 (default) GPU tensors sent
                              and received in GPU memory where the MPI is
                              CUDA-aware (MPIX_Query_cuda_support), else
                              staged through pinned host buffers; -1:
                              always staged                              */
} dp_mpi_opts;
DPDEF int dp_mpi_agree(int rc, dp_error *err, const dp_mpi_opts *mo);
DPDEF int dp_exec_mpi(const dp_graph *g, const dp_cluster *c, const int *assign,
                      const dp_exec_opts *opts, dp_exec_result *res, dp_error *err);
DPDEF int dp_exec_mpi_lead(const dp_graph *g, const dp_cluster *c, const int *assign,
                           const dp_exec_opts *opts, dp_exec_result *res, dp_error *err);
DPDEF int dp_exec_mpi_follow(const dp_graph *g, const dp_cluster *c, const dp_exec_opts *opts, dp_error *err);
DPDEF int dp_exec_mpi_stop(const dp_exec_opts *opts, dp_error *err);
DPDEF int dp_exec_mpi_beat(const dp_exec_opts *opts, dp_error *err);
DPDEF int dp_mpi_pingpong(const dp_mpi_opts *mo, int peer, size_t bytes, int reps, double *one_way, dp_error *err);
DPDEF int dp_calibrate_mpi(dp_cluster *out, const dp_calibrate_opts *opts, const dp_mpi_opts *mo, dp_error *err);
#endif

/* ======================================================================
   >>api-util
   ====================================================================== */
typedef struct dp_rng { uint64_t s[4]; } dp_rng;
DPDEF void     dp_rng_seed(dp_rng *r, uint64_t seed);
DPDEF uint64_t dp_rng_next(dp_rng *r);
DPDEF double   dp_rng_uniform(dp_rng *r);            /* [0, 1)                */
DPDEF int      dp_rng_int(dp_rng *r, int n);         /* [0, n)                */
DPDEF double   dp_now(void);                         /* monotonic seconds     */

/* ======================================================================
   >>internal
   Not API: private (dp__) functions that doppler_cuda.cu and the tests
   share with the implementation. Declared here so that one header
   serves; they may change at any time.
   ====================================================================== */
/* Fills err (may be NULL) with code and the printf-style message and
   returns code: the one formatter of every failure message, the library's
   and doppler_cuda.cu's. */
DPDEF int dp__fail(dp_error *err, dp_code code, const char *fmt, ...);
/* The implementation's allocator (DP_CALLOC, DP_FREE: the program's own
   or the default one), for what doppler_cuda.cu hands to the library to
   free (a result's arrays, dp_exec_result_free): n zeroed elements of
   size bytes (n 0: one), or NULL; and its free. */
DPDEF void *dp__calloc(size_t n, size_t size);
DPDEF void  dp__free(void *p);
/* Defined in doppler_cuda.cu (so extern always, no DPDEF), for
   tests/test_cuda.c: op v's GPU algorithm run on the host with the same
   element, index and row functions as the kernels (lane partial sums and
   the butterfly emulated), so that it equals the GPU's output bit for bit
   except for expf/tanhf (libm's here). Needs no GPU. */
void dp__cuda_host_kernel(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed);
/* The tensor-core matmul (precision DP_PREC_TF32 or BF16) emulated on the
   host: the kernel's tiles, shared-memory staging with zero fill (vec_a,
   vec_b: the 16-byte loads of A, B, else 4-byte), warps, fragments and
   lanes, through the same index maps; inputs rounded as the hardware
   rounds them, each mma's products summed exactly (in double) and added to
   the FP32 accumulator. C = A B, row-major r x K, K x c; bm the block
   tile's rows (64 or 128, as the launch picks them). Returns 0, or -1 for
   a precision other than TF32 and BF16 or another bm. */
int dp__cuda_host_mma(int r, int K, int c, const float *A, const float *B, float *C, int precision, int bm, int vec_a, int vec_b);
/* The same for the second tensor-core kernel (dp__k_mma2, the default;
   doppler_cuda.cu >>cuda-mma2): its tile order, swizzled stage buffers,
   TF32 inputs rounded once in shared memory, the K indices of each step
   dealt to its mmas in the kernel's permuted order. bm x bn: the block
   tile, 128 x 128, 64 x 128 or 64 x 64 (the result does not depend on
   it). Returns 0, or -1 for another precision or tile. */
int dp__cuda_host_mma2(int r, int K, int c, const float *A, const float *B, float *C, int precision, int bm, int bn, int vec_a, int vec_b);
/* The second kernel's index maps, for the tests: map 0 k_of: in {prec,
   kk, kap} -> out {the step's K index}; 1 A source: {prec, lane, kk, e}
   -> {row in the mma tile, K index in the step} of fragment element e;
   2 B source: {prec, lane, kk, e, NT, j} -> {K index in the step, column
   in the warp tile}; 3 col: {NT, j, n} -> {column in the warp tile}; 4
   store: {NT, lane, hi, e1, h} -> {row in the mma tile, first of 4
   columns in the warp tile}; 5 A offset: {row, k} -> {float}; 6 B offset:
   {bn, k, n} -> {float}; 7 tile order: {t, tr, tc} -> {tile row, tile
   column}; 8 shape: {r, c, cap} -> {bm, bn}; 9 warp: {w, bm, bn} -> {row,
   column}. Returns 0, or -1 for another map. */
int dp__cuda_mma2_map(int map, const int *in, int *out);
/* dp_cuda_matmul_time with the tensor-core kernel chosen: 0 the default,
   1 dp__k_mma, 2 dp__k_mma2 (for their A/B measurement) */
int dp__cuda_matmul_time_kernel(int dev, int precision, int kernel, int r, int K, int c, int reps, double *seconds, int *used, dp_error *err);
/* A row op's kernel alone (softmax, rmsnorm, layernorm; DP_OP_COPY: a
   device-to-device copy of as many bytes) on an r x c tensor, the row
   kernel chosen: 0 the default, 1 a warp per row, 2 with a block per row
   for long rows (their A/B measurement, exec_bench rows); the median of
   reps launches into *seconds and, where out is not NULL, the r c outputs
   of the input dp_input_value(1, 0, .) (the kernels' agreement, test_cuda) */
int dp__cuda_rows_time_kernel(int dev, int kind, int kernel, int r, int c, int reps, double *seconds, float *out, dp_error *err);
/* x rounded as the tensor cores round a matmul's inputs, returned as
   floats: as cvt.rna.tf32.f32 (to nearest, ties away from zero, 10
   explicit mantissa bits) and as __float2bfloat16_rn (to nearest, ties to
   even, 7); inf as it is, NaN stays NaN. The CPU executor's TF32 and BF16
   matmuls (dp_exec_opts.precision) and doppler_cuda.cu's host emulation of
   the tensor-core kernel (dp__cuda_host_mma) both use these. */
DPDEF float dp__round_tf32(float x);
DPDEF float dp__round_bf16(float x);
/* Defined in doppler_cuda.cu (extern, no DPDEF), for tests/test_cuda.c:
   dp_calibrate_cuda's arithmetic. Each probe is a chain of
   DP__CUCAL_CHAIN ops per logical device, run DP__CUCAL_REPS times by
   dp_exec_cuda (the median run read). dp__cucal_median: the lower median
   of v[0..n) (sorted in place; 0 for n < 1). dp__cucal_chain_stats: over
   ops[0..n) (chain order) of a run's start and end, *op_time the median
   of end - start; chained: gaps[i] (may be NULL) = start[ops[i + 1]] -
   end[ops[i]] and *gap their median (else 0); -1 for n outside
   1..DP__CUCAL_MAX_CHAIN or NULLs, else 0. dp__cucal_curve: a speed
   curve from points measured at increasing sizes (work FLOPs, seconds):
   points whose work does not increase (or is not positive and finite)
   dropped, each time raised to at least 1e-9 and to the last kept
   point's time, speed = work / time; returns the points written. */
#define DP__CUCAL_CHAIN 32
#define DP__CUCAL_REPS 3
#define DP__CUCAL_MAX_CHAIN 256
double dp__cucal_median(double *v, int n);
int dp__cucal_chain_stats(const double *start, const double *end, const int *ops, int n, int chained,
                          double *op_time, double *gaps, double *gap);
int dp__cucal_curve(const double *work, const double *seconds, int n, dp_speed_point *out);
/* Defined in doppler_cuda.cu (extern, no DPDEF), for tests/test_cuda.c:
   the SMs of the n green-context partitions of one GPU of `sms` SMs
   (minimum partition min_part, sizes multiples of align; 0 or less: 1)
   for n logical devices of relative speeds speed[0..n-1] (NULL or all
   equal: equal shares). Share i is sms x speed[i] / (sum of speeds),
   rounded DOWN to a multiple of align, at least min_part rounded up to a
   multiple of align; out_sms[i] gets it. DP_ERR_RANGE (out_sms untouched
   but for garbage) when n partitions of that minimum do not fit in sms or
   a speed is not positive and finite; DP_ERR_ARG for n < 1 or NULLs. The
   SMs left over stay unused. */
int dp__cu_partition(int sms, int min_part, int align, const double *speed, int n, int *out_sms, dp_error *err);
/* Defined in doppler_cuda.cu, for tests/test_cuda.c: the nanoseconds a
   paced copy between two logical devices on one GPU lasts: (latency +
   bytes / bandwidth) x seconds_per_unit x 1e9 (the simulator's link time,
   dp_xfer_time, in seconds), rounded to the nearest; 0 when that is not
   positive (or NaN); at most DP__CU_PACE_MAX_NS (60 s). bandwidth <= 0 or
   infinite: no per-byte time. */
#define DP__CU_PACE_MAX_NS 60000000000ULL
unsigned long long dp__cu_pace_ns(double latency, double bandwidth, double bytes, double seconds_per_unit);
/* Defined in doppler_cuda.cu (extern, no DPDEF), for the MPI executor
   built with DP_WITH_CUDA (>>mpi; dp_mpi_opts.devices DP_MPI_CUDA): the
   CUDA executor's machinery for the logical devices one process (a rank)
   runs, here[d] nonzero (nd = c->n entries), the k-th of them on GPU
   k % G (G: opts->gpus, 0 -> every GPU present, at most those devices),
   dispatched dynamically. dp__cu_rank_open checks o as dp_exec_cuda does
   (after dp__exec_args; a dispatch other than dynamic: DP_ERR_ARG), makes
   the streams, pools, events and, with stage nonzero, one pinned host
   block holding a staging buffer for every edge with one end here and the
   other not (dp__cu_stage_plan), and fills r; no GPU: DP_ERR_DEVICE "no
   CUDA device: ...". Then, with x = r->x:
     h         dp_exec_cuda's hooks on it (ctx x): launch an op here; copy
               an edge between two devices here; release; wait (deadline
               0: one poll), whose completions are ops here and copies
               into devices here (-1 - e), those made by arrived included;
     gpus, precision   the GPUs used; the matmuls' dp_precision (DEFAULT
               resolved as dp_exec_cuda resolves it);
     begin     a run's start (stamps cleared, each GPU's start stamped and
               awaited); *t (may be NULL) gets dp_now() right after;
     end       every stream awaited; start and end of every op here in
               seconds from its GPU's start stamp; dig[v] the hash of sink
               v's output for sinks here, 0 for every other op (the hash
               dp_exec_cuda folds into its digest); keep (may be NULL):
               keep[v] gets each real sink's output here (a NULL keep[v]
               is malloc'ed);
     drain     every buffer freed, every stream awaited (err NULL: waits
               for the rest after a failure);
     out       op's output buffer on its GPU (after launch);
     stage     edge's pinned staging buffer (NULL without one);
     recv      an edge into a device here from another process: its copy
               buffer made on the consumer's GPU and awaited (*dev),
               ready for a CUDA-aware MPI_Irecv;
     send_stage  an edge out of a device here to another process, its
               producer ended: its output copied into the edge's staging
               buffer after the producer's end event (ready says when);
     arrived   edge's tensor received, got bytes of it: from its staging
               buffer (copied to the device), else in its copy buffer
               already (recv's); the rest zeroed; its completion then
               comes from wait, once the tensor is on the consumer's GPU;
     ready     *ready 1 when edge's staging copy out (send_stage) is done;
     close     everything freed (x itself).
   Every function but close returns 0 or a dp_code with err filled. */
typedef struct dp__cu_rank {
    void *x;
    dp_dispatch_hooks h;
    int gpus, precision;
    int  (*begin)(void *x, double *t, dp_error *err);
    int  (*end)(void *x, double *start, double *end, uint64_t *dig, float **keep, dp_error *err);
    int  (*drain)(void *x, dp_error *err);
    void *(*out)(void *x, int op);
    void *(*stage)(void *x, int edge);
    int  (*recv)(void *x, int edge, void **dev, dp_error *err);
    int  (*send_stage)(void *x, int edge, dp_error *err);
    int  (*arrived)(void *x, int edge, size_t got, dp_error *err);
    int  (*ready)(void *x, int edge, int *ready, dp_error *err);
    void (*close)(void *x);
} dp__cu_rank;
int dp__cu_rank_open(dp__cu_rank *r, const dp_graph *g, const dp_cluster *c, const int *assign,
                     const unsigned char *here, const dp_exec_opts *o, int stage, dp_error *err);
/* The staging plan (doppler_cuda.cu, for dp__cu_rank_open and
   tests/test_cuda.c): each edge e with exactly one end on a device here
   (here[assign[src]] != here[assign[dst]]) gets off[e], its offset in one
   block: the bytes so far rounded up to DP__CU_STAGE_ALIGN, then its
   dp_exec_edge_bytes at bytes_scale; every other edge SIZE_MAX. Returns
   the block's bytes (0: none). */
#define DP__CU_STAGE_ALIGN 256
size_t dp__cu_stage_plan(const dp_graph *g, const int *assign, const unsigned char *here, double bytes_scale, size_t *off);
/* An executor's arguments, as both executors check them (who: "exec",
   "exec (cuda)", the messages' prefix): a result, graph and cluster that
   fit (dp_check), every op on a device of c, reps 1..10000 (0 -> 1),
   scales >= 0 then set (dp_exec_scales), every real op's tensors. */
DPDEF int dp__exec_args(const dp_graph *g, const dp_cluster *c, const int *assign, dp_exec_opts *o,
                        const dp_exec_result *res, const char *who, dp_error *err);
/* The index of the median of v[0..n) (the lower middle for even n). */
DPDEF int dp__median_index(const double *v, int n);
/* Length of the valid UTF-8 sequence at s (1..4), 0 when it is not one
   (overlong forms, surrogates and code points past U+10FFFF are not):
   the JSON and SVG writers', and the CLI's. */
DPDEF int dp__utf8_len(const unsigned char *s);

#ifdef __cplusplus
}
#endif
#endif /* DOPPLER_H */

/* ######################################################################
   IMPLEMENTATION
   ###################################################################### */
#ifdef DOPPLER_IMPLEMENTATION
#ifndef DOPPLER_IMPLEMENTATION_DONE
#define DOPPLER_IMPLEMENTATION_DONE

#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The allocator: every allocation of the implementation (the growable
   arrays and the executor's threads included) goes through these. Define
   DP_MALLOC, DP_REALLOC and DP_FREE together, DP_CALLOC optionally (when
   missing, DP_MALLOC and memset stand in for it). */
#if defined(DP_MALLOC) != defined(DP_FREE) || defined(DP_MALLOC) != defined(DP_REALLOC)
#error "doppler.h: define DP_MALLOC, DP_REALLOC and DP_FREE together (DP_CALLOC is optional)"
#endif
#ifndef DP_MALLOC
/* The default allocator maps its large blocks (2 MiB or more) itself, on
   a 2 MiB boundary and in whole 2 MiB, and advises them (each whole
   2 MiB of the bytes asked for; the partial last one is left in small
   pages: dp__advise) to the kernel as candidates for transparent huge
   pages (Linux, madvise MADV_HUGEPAGE; where THP is set to "madvise", a
   common default, they get none otherwise) before anything touches them. The first touch of a block
   then costs one fault per 2 MiB instead of one per 4 KiB page, which on
   a virtual machine was a fifth to four fifths of reading, simulating
   and scheduling a graph of 10^5 to 10^6 ops (bench/RESULTS.md part 3).
   glibc's malloc would not do: it writes a block's header before any
   advice (a 4 KiB page in the block's first 2 MiB, and then every other
   page there faults alone), and after a large block is freed it serves
   the next ones below that size from its heap, in 4 KiB pages (its
   moving mmap threshold: about 2300 faults of the 10^6-op chain's
   read). A mapped block grows by moving its pages (mremap: no copy) and
   comes zeroed (calloc: no memset). Every block of this allocator starts
   with a header of 16 bytes (its size, and whether it is mapped), which
   DP_FREE reads. Elsewhere (not Linux, DP_NO_HUGEPAGES, or under
   AddressSanitizer or ThreadSanitizer, which watch malloc's blocks) it is
   malloc, realloc, calloc and free; a program's own allocator
   (DP_MALLOC) is left alone. A refused advice is ignored (the same
   bytes, in small pages). Valgrind sees a mapped block as a mapping,
   not a heap block: its leak check misses one (the sanitizers' builds,
   which use malloc, do not). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DP__SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define DP__SANITIZED 1
#endif
#endif
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(DP_NO_HUGEPAGES) && !defined(DP__SANITIZED)
#define DP__HUGE_PAGES 1
#include <sys/syscall.h>
#define DP__HUGE_MIN ((size_t)1 << 21)
/* a block's header: its bytes (mapped: the mapping's, header included;
   else the caller's), and 1 when mapped; 16 bytes, malloc's alignment */
typedef struct dp__blk { size_t size, mapped; } dp__blk;
static size_t dp__huge_round(size_t n) { return (n + DP__HUGE_MIN - 1) / DP__HUGE_MIN * DP__HUGE_MIN; }
/* The advice covers the whole 2 MiB that lie within the `used` bytes a
   caller asked for (its header included), not the last, partial one: a
   huge page there would make resident the unasked-for rest of it (up to
   2 MiB an array: the tail of every edge array of a graph of 10^5 ops
   was a third of its resident bytes), so it takes small pages, as many as
   are touched. */
static void dp__advise(char *a, size_t used)
{
    size_t whole = used / DP__HUGE_MIN * DP__HUGE_MIN;
    if (whole) (void)madvise(a, whole, MADV_HUGEPAGE);
}
/* len bytes (whole 2 MiB) of fresh zeroed memory on a 2 MiB boundary,
   its first `used` advised (dp__advise); NULL when refused */
static char *dp__map(size_t len, size_t used)
{
    size_t span = len + DP__HUGE_MIN;
    char *m, *a;
    if (span < len) return NULL;
    m = (char *)mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == (char *)MAP_FAILED) return NULL;
    a = (char *)(((uintptr_t)m + DP__HUGE_MIN - 1) / DP__HUGE_MIN * DP__HUGE_MIN);
    if (a > m) (void)munmap(m, (size_t)(a - m));
    if (m + span > a + len) (void)munmap(a + len, (size_t)(m + span - (a + len)));
    dp__advise(a, used);
    return a;
}
/* size bytes (zeroed if zero), the first `dense` of them advised: those
   written whole; a caller that writes the rest only in part (an arena's
   last arrays: dp__arena_sparse) keeps them in small pages */
static void *dp__blk_alloc_dense(size_t size, int zero, size_t dense)
{
    dp__blk *b;
    if (size > (size_t)-1 / 2) return NULL;
    if (size + sizeof *b >= DP__HUGE_MIN) {
        size_t len = dp__huge_round(size + sizeof *b);
        if (!(b = (dp__blk *)(void *)dp__map(len, (dense < size ? dense : size) + sizeof *b))) return NULL;
        b->size = len; b->mapped = 1;
    } else {
        if (!(b = (dp__blk *)(zero ? calloc(1, size + sizeof *b) : malloc(size + sizeof *b)))) return NULL;
        b->size = size; b->mapped = 0;
    }
    return b + 1;
}
static void *dp__blk_alloc(size_t size, int zero) { return dp__blk_alloc_dense(size, zero, size); }
static void dp__blk_free(void *p)
{
    dp__blk *b = (dp__blk *)p - 1;
    if (!p) return;
    if (b->mapped == 1) (void)munmap((void *)b, b->size);
    else free(b);   /* (a block not this allocator's: glibc's size field is never 1, so free fails loudly) */
}
/* realloc's result is tested before it is used, and NULL returned as
   such, so that a caller's "if (!nb) free(old)" reads, to the compiler's
   use-after-free analysis too, as the failed realloc it is */
static void *dp__blk_realloc(void *p, size_t size)
{
    dp__blk *b = (dp__blk *)p - 1, *nb;
    size_t len;
    char *na;
    void *q;
    if (!p) return dp__blk_alloc(size, 0);
    if (size > (size_t)-1 / 2) return NULL;
    if (!b->mapped && size + sizeof *b < DP__HUGE_MIN) {
        if (!(nb = (dp__blk *)realloc(b, size + sizeof *b))) return NULL;
        nb->size = size;
        return nb + 1;
    }
    if (!b->mapped) {   /* from malloc to a mapping: copied */
        if (!(q = dp__blk_alloc(size, 0))) return NULL;
        memcpy(q, p, b->size < size ? b->size : size);
        free(b);
        return q;
    }
    len = dp__huge_round(size + sizeof *b);
    if (len <= b->size) {   /* smaller: the tail unmapped, the block stays mapped */
        if (len < b->size) (void)munmap((char *)b + len, b->size - len);
        b->size = len;
        return p;
    }
    /* larger: grown where it is, or its pages moved to the start of a
       fresh mapping (both on 2 MiB boundaries: whole huge pages move) */
    if (syscall(SYS_mremap, (void *)b, b->size, len, 0) != -1) {
        dp__advise((char *)b, size + sizeof *b);
        b->size = len;
        return p;
    }
    if (!(na = dp__map(len, size + sizeof *b))) return NULL;
    if (syscall(SYS_mremap, (void *)b, b->size, b->size, 3 /* MREMAP_MAYMOVE | MREMAP_FIXED */, na) == -1) {
        memcpy(na, (void *)b, b->size);
        (void)munmap((void *)b, b->size);
    } else dp__advise(na, size + sizeof *b);   /* the moved pages keep their own advice: the old block's last 2 MiB had none */
    nb = (dp__blk *)(void *)na;
    nb->size = len;
    return nb + 1;
}
static void *dp__blk_calloc(size_t n, size_t size)
{
    if (size && n > (size_t)-1 / size) return NULL;   /* calloc's own answer */
    return dp__blk_alloc(n * size, 1);
}
#define DP_MALLOC(sz)       dp__blk_alloc(sz, 0)
#define DP_REALLOC(p, sz)   dp__blk_realloc(p, sz)
#define DP_FREE(p)          dp__blk_free(p)
#ifndef DP_CALLOC
#define DP_CALLOC(n, sz)    dp__blk_calloc(n, sz)
#endif
#else
#define DP_MALLOC(sz)       malloc(sz)
#define DP_REALLOC(p, sz)   realloc(p, sz)
#define DP_FREE(p)          free(p)
#ifndef DP_CALLOC
#define DP_CALLOC(n, sz)    calloc(n, sz)
#endif
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
   >>util
   ====================================================================== */
#define DP__CODE_TEXT(id, text) text,
static const char *dp__code_texts[] = { DP_CODES(DP__CODE_TEXT) };
#undef DP__CODE_TEXT

DPDEF const char *dp_code_text(dp_code code)
{
    return (code >= 0 && code < DP_CODE__COUNT) ? dp__code_texts[code] : "unknown error";
}

/* Fill err (may be NULL) and return code. Every failure goes through
   here: dp__fail (>>internal) and, through dp__fail, doppler_cuda.cu. */
static int dp__vfail(dp_error *err, dp_code code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return (int)code;
}

DPDEF int dp__fail(dp_error *err, dp_code code, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = dp__vfail(err, code, fmt, ap);
    va_end(ap);
    return rc;
}

static void dp__ok(dp_error *err)
{
    if (err) { err->code = DP_OK; err->msg[0] = 0; }
}

/* size zeroed bytes (DP_CALLOC, or DP_MALLOC and memset), or NULL */
static void *dp__zalloc(size_t size)
{
    void *p;
#ifdef DP_CALLOC
    p = DP_CALLOC(1, size);   /* fresh pages come zeroed: no memset */
#else
    p = DP_MALLOC(size);
    if (p) memset(p, 0, size);
#endif
    return p;
}

/* Allocation that reports: NULL result leaves a message in err. */
static void *dp__alloc(size_t n, size_t size, dp_error *err, const char *what)
{
    void *p;
    if (n == 0) n = 1;
    if (size && n > (size_t)-1 / size) {
        dp__fail(err, DP_ERR_NOMEM, "allocation of %zu x %zu bytes for %s overflows", n, size, what);
        return NULL;
    }
#ifdef DP_CALLOC
    p = DP_CALLOC(n, size);   /* fresh pages come zeroed: no memset */
#else
    p = DP_MALLOC(n * size);
    if (p) memset(p, 0, n * size);
#endif
    if (!p) dp__fail(err, DP_ERR_NOMEM, "out of memory allocating %zu bytes for %s", n * size, what);
    return p;
}

/* dp__alloc(size, 1, ...) for a block whose bytes from `dense` on are
   written only in part: with the default allocator's huge pages those
   get none (dp__blk_alloc_dense), so that a touch there makes 4 KiB
   resident, not 2 MiB; with any other allocator, dp__alloc. */
static void *dp__alloc_dense(size_t size, size_t dense, dp_error *err, const char *what)
{
#ifdef DP__HUGE_PAGES
    void *p = dp__blk_alloc_dense(size ? size : 1, 1, dense);
    if (!p) dp__fail(err, DP_ERR_NOMEM, "out of memory allocating %zu bytes for %s", size, what);
    return p;
#else
    (void)dense;
    return dp__alloc(size, 1, err, what);
#endif
}

DPDEF void *dp__calloc(size_t n, size_t size) { return dp__alloc(n, size, NULL, "doppler_cuda.cu"); }
DPDEF void dp__free(void *p) { DP_FREE(p); }

/* One allocation per object: dp__carve runs twice over the object's
   buffers, first with no base to add up the size, then, after
   dp__arena_alloc made one zeroed block, to hand out the pointers (each
   64-byte aligned, so that the dense kernels' vectors never straddle a
   cache line). DP__A(ptr, count, type) is one such carve from the arena
   `ar` in scope; freeing the object is freeing the block. */
typedef struct dp__arena {
    char *base; size_t off; int over;
    int sparse; size_t dense;  /* marked by dp__arena_sparse: the arrays
                                  from offset dense on are written only in
                                  part (dp__arena_alloc: small pages) */
} dp__arena;

static void *dp__carve(dp__arena *a, size_t count, size_t size)
{
    size_t o = a->off, bytes;
    if (count == 0) count = 1;
    if (count > ((size_t)-1 / 2 - a->off) / size) { a->over = 1; return NULL; }
    bytes = (count * size + 63) & ~(size_t)63;
    a->off += bytes;
    return a->base ? a->base + o : NULL;
}

#define DP__A(ptr, count, type) ((ptr) = (type *)dp__carve(&ar, (size_t)(count), sizeof(type)))

/* In the sizing pass, before the arrays a user of the arena writes only
   in part (the first few entries, or a few scattered ones): they are
   carved last, and with 2 MiB pages each of them touched would cost
   whole 2 MiB, so their pages are small (dp__alloc_dense). The mark is
   the first one's offset; the carving pass leaves it. */
static void dp__arena_sparse(dp__arena *a)
{
    if (a->base || a->sparse) return;
    a->sparse = 1;
    a->dense = a->off;
}

/* After the sizing pass: one zeroed allocation into *raw (to free), the
   base aligned, ready for the carving pass. */
static int dp__arena_alloc(dp__arena *a, void **raw, dp_error *err, const char *what)
{
    if (a->over) return dp__fail(err, DP_ERR_NOMEM, "%s: size overflows", what);
    if (!(*raw = dp__alloc_dense(a->off + 64, (a->sparse ? a->dense : a->off) + 64, err, what))) return DP_ERR_NOMEM;
    a->base = (char *)*raw + ((64 - (uintptr_t)*raw % 64) % 64);
    a->off = 0;
    return 0;
}

/* One binary heap for every queue of the library (ops by key, events by
   time, ready ops by the dispatch rule, copies by arrival): h[0..n) of
   type T, BEFORE(ctx, a, b) nonzero when element a leaves before b (a
   strict order, so ties keep the order of the sifts). Macros, so that the
   comparison is inlined in the simulator's inner loop. */
#define DP__HEAP_PUSH(T, h, n, x, BEFORE, ctx) do {                                   \
        T dp__hx = (x);                                                               \
        int dp__hi = (n)++;                                                           \
        while (dp__hi > 0 && BEFORE((ctx), dp__hx, (h)[(dp__hi - 1) / 2])) {          \
            (h)[dp__hi] = (h)[(dp__hi - 1) / 2]; dp__hi = (dp__hi - 1) / 2;           \
        }                                                                             \
        (h)[dp__hi] = dp__hx;                                                         \
    } while (0)

#define DP__HEAP_POP(T, h, n, out, BEFORE, ctx) do {                                  \
        int dp__hn = --(n), dp__hi = 0;                                               \
        T dp__hl = (h)[dp__hn];                                                       \
        (out) = (h)[0];                                                               \
        for (;;) {                                                                    \
            int dp__hc = 2 * dp__hi + 1;                                              \
            if (dp__hc >= dp__hn) break;                                              \
            if (dp__hc + 1 < dp__hn && BEFORE((ctx), (h)[dp__hc + 1], (h)[dp__hc])) dp__hc++; \
            if (!BEFORE((ctx), (h)[dp__hc], dp__hl)) break;                           \
            (h)[dp__hi] = (h)[dp__hc]; dp__hi = dp__hc;                               \
        }                                                                             \
        if (dp__hn > 0) (h)[dp__hi] = dp__hl;                                         \
    } while (0)

static char *dp__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = (char *)DP_MALLOC(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* splitmix64's mixing step: the rng's seeding, the hashes of names and
   edges (>>graph) and the executors' input values (>>kernels) all use it */
static uint64_t dp__mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* xoshiro256** seeded by splitmix64. */
DPDEF void dp_rng_seed(dp_rng *r, uint64_t seed)
{
    int i;
    for (i = 0; i < 4; i++) r->s[i] = dp__mix(seed += 0x9e3779b97f4a7c15ULL);
}

static uint64_t dp__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

DPDEF uint64_t dp_rng_next(dp_rng *r)
{
    uint64_t *s = r->s, res = dp__rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = dp__rotl(s[3], 45);
    return res;
}

DPDEF double dp_rng_uniform(dp_rng *r) { return (double)(dp_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

DPDEF int dp_rng_int(dp_rng *r, int n)
{
    return n <= 1 ? 0 : (int)(((dp_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

DPDEF double dp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The calling thread's CPU time in seconds. */
static double dp__thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The largest file dp__slurp reads: DP_MAX_FILE_BYTES; a test may lower
   it (the implementation is in its translation unit) to see the limit
   enforced on a stream without feeding it a gigabyte. */
static size_t dp__file_limit = DP_MAX_FILE_BYTES;

/* s for a message in buf[cap] (cap >= 8): a value of cap bytes or more
   keeps its first and last bytes around "...", so that what follows the
   quoted value in the message (the reason) always shows. Returns buf.
   dp__q: values from a file (DP__Q); file names get 256 (dp__text). */
#define DP__Q 72
/* dp__qn of the n bytes at s (a line or a token as it stands in a text) */
static const char *dp__qnv(char *buf, size_t cap, const char *s, size_t n)
{
    size_t h = (cap - 4) / 2, tl = cap - 4 - h;
    if (n < cap) { memcpy(buf, s, n); buf[n] = 0; return buf; }
    memcpy(buf, s, h);
    memcpy(buf + h, "...", 3);
    memcpy(buf + h + 3, s + n - tl, tl);
    buf[h + 3 + tl] = 0;
    return buf;
}

static const char *dp__qn(char *buf, size_t cap, const char *s)
{
    return s ? dp__qnv(buf, cap, s, strlen(s)) : dp__qnv(buf, cap, "", 0);
}

static const char *dp__q(char *buf, const char *s) { return dp__qn(buf, DP__Q, s); }

/* A byte no text reader takes: NUL, a control byte other than tab, LF,
   VT, FF, CR (0x09..0x0d), or DEL. */
static int dp__binary_byte(unsigned char ch)
{
    return (ch < 32 && (ch < 9 || ch > 13)) || ch == 127;
}

/* The first byte in b[0..n) that no text reader takes (dp__binary_byte),
   or n: see dp__text_init. 64 bytes at a time: a block is looked at byte
   by byte only when the OR of its bytes' tests says one is such a byte;
   that fixed-length loop is one that gcc and clang turn into vector
   instructions at -O2 (15 ms for 200 MB here, where testing 8 bytes at a
   time with bit tricks took 45). */
static size_t dp__binary_at(const char *b, size_t n)
{
    size_t i = 0, k;
    for (; i + 64 <= n; i += 64) {
        const unsigned char *p = (const unsigned char *)b + i;
        unsigned char any = 0;
        for (k = 0; k < 64; k++) any |= (unsigned char)dp__binary_byte(p[k]);
        if (any)
            for (k = 0; k < 64; k++)
                if (dp__binary_byte(p[k])) return i + k;
    }
    for (; i < n; i++)
        if (dp__binary_byte((unsigned char)b[i])) break;
    return i;
}

/* Read a whole file (at most dp__file_limit bytes) into a NUL-terminated
   buffer. A regular file's size is checked before anything is allocated,
   and its buffer is made to measure; other files (pipes, character
   devices) grow by doubling, the limit checked after every read, so that
   at most the limit plus one read is ever held. text: the content must be
   text (dp__binary_at), checked as it arrives, so that /dev/zero or
   /dev/urandom given as a graph fails on its first read; DP__TEXT_OR_DPB:
   the same unless it opens with the magic of the binary graph format
   (DP__DPB_MAGIC, see >>formats). */
#define DP__TEXT_OR_DPB 2
#define DP__DPB_MAGIC "\x89" "DPB\r\n\x1a\n"   /* 8 bytes */

/* buf[0..len) opens with that magic */
static int dp__is_dpb(const char *buf, size_t len) { return len >= 8 && memcmp(buf, DP__DPB_MAGIC, 8) == 0; }

/* The message of a byte no text holds at offset at of buf (path:line). */
static int dp__binary_fail(dp_error *err, const char *path, const char *buf, size_t at)
{
    int line = 1;
    size_t j;
    for (j = 0; j < at; j++) line += buf[j] == '\n';
    return dp__fail(err, DP_ERR_PARSE, "%s:%d: binary data (byte 0x%02x at offset %zu); not a text file", path, line,
                    (unsigned char)buf[at], at);
}

/* Opens path for reading whole (dp__slurp_as, dp__input_open): *f, and
   *size its size when it is a regular file (-1 otherwise), which must be
   within the limit. */
static int dp__file_open(const char *path, FILE **f, long long *size, dp_error *err)
{
    struct stat st;
    *f = NULL; *size = -1;
    if (!path) return dp__fail(err, DP_ERR_ARG, "no file name given");
    *f = fopen(path, "rb");
    if (!*f) return dp__fail(err, DP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(*f), &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > (uint64_t)dp__file_limit) {
            fclose(*f);
            *f = NULL;
            return dp__fail(err, DP_ERR_LIMIT, "%s: %llu bytes, larger than the limit of %zu bytes (DP_MAX_FILE_BYTES)",
                            path, (unsigned long long)st.st_size, dp__file_limit);
        }
        *size = (long long)st.st_size;
    }
    return 0;
}

/* dp__slurp_as's reading of f, opened by dp__file_open (size: as there),
   which it closes. */
static int dp__slurp_from(FILE *f, long long size, const char *path, int text, char **out, size_t *len, dp_error *err)
{
    char *buf = NULL;
    size_t cap = 65536, n = 0, lim = dp__file_limit;
    *out = NULL; *len = 0;
    if (size >= 0) cap = (size_t)size + 2;   /* one spare byte sees the end */
    else if (cap > lim + 2) cap = lim + 2;
    for (;;) {
        size_t got, bad;
        if (n + 1 >= cap || !buf) {
            char *nb;
            size_t nc = !buf ? cap : cap > (lim + 2) / 2 ? lim + 2 : 2 * cap;
            nb = (char *)DP_REALLOC(buf, nc);
            if (!nb) { DP_FREE(buf); fclose(f); return dp__fail(err, DP_ERR_NOMEM, "%s: out of memory reading the file (%zu bytes)", path, nc); }
            buf = nb; cap = nc;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        if (text == DP__TEXT_OR_DPB && n == 0 && dp__is_dpb(buf, got)) text = 0;
        if (text && (bad = dp__binary_at(buf + n, got)) < got) {
            int rc = dp__binary_fail(err, path, buf, n + bad);
            DP_FREE(buf); fclose(f);
            return rc;
        }
        n += got;
        if (n > lim) {
            DP_FREE(buf); fclose(f);
            return dp__fail(err, DP_ERR_LIMIT, "%s: file larger than the limit of %zu bytes (DP_MAX_FILE_BYTES)", path, lim);
        }
        if (got == 0) break;
    }
    if (ferror(f)) { int e = errno; DP_FREE(buf); fclose(f); return dp__fail(err, DP_ERR_IO, "%s: read error: %s", path, strerror(e)); }
    fclose(f);
    buf[n] = 0;
    *out = buf; *len = n;
    return 0;
}

static int dp__slurp_as(const char *path, int text, char **out, size_t *len, dp_error *err)
{
    FILE *f;
    long long size;
    int rc;
    *out = NULL; *len = 0;
    if ((rc = dp__file_open(path, &f, &size, err))) return rc;
    return dp__slurp_from(f, size, path, text, out, len, err);
}

static int dp__slurp(const char *path, char **out, size_t *len, dp_error *err)
{
    return dp__slurp_as(path, 0, out, len, err);
}

/* A text file (graphs, assignments, mapping files): see dp__slurp_as. */
static int dp__slurp_text(const char *path, char **out, size_t *len, dp_error *err)
{
    return dp__slurp_as(path, 1, out, len, err);
}

/* A whole input file, data[0..len): a regular file mapped read-only
   (mmap: no copy, the pages come from the page cache as they are read),
   anything else, or a file mmap refuses, read by dp__slurp_as. text as
   there, with the same limits and messages. dp__input_close releases it.
   (A mapped file cut short by another process while it is read makes the
   reader fault, as every reader of mapped files does.) */
typedef struct dp__input {
    const char *data;
    size_t len;
    void *map;     /* the mapping, or NULL */
    char *buf;     /* dp__slurp_as's buffer, or NULL */
} dp__input;

static int dp__input_open(dp__input *in, const char *path, int text, dp_error *err)
{
    FILE *f;
    long long size;
    int rc;
    memset(in, 0, sizeof *in);
    if ((rc = dp__file_open(path, &f, &size, err))) return rc;
    if (size > 0) {
#ifdef MAP_POPULATE
        void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(f), 0);   /* mapped at once: it is all read */
#else
        void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
#endif
        if (m != MAP_FAILED) {
            size_t bad;
            fclose(f);
            in->map = m;
            in->data = (const char *)m;
            in->len = (size_t)size;
            if (text == DP__TEXT_OR_DPB && dp__is_dpb(in->data, in->len)) text = 0;
            if (text && (bad = dp__binary_at(in->data, in->len)) < in->len) {
                rc = dp__binary_fail(err, path, in->data, bad);
                munmap(in->map, in->len);
                memset(in, 0, sizeof *in);
            }
            return rc;
        }
    }
    /* a stream (read from the one descriptor: a FIFO's writer sees one
       reader), an empty file, or one mmap refuses */
    rc = dp__slurp_from(f, size, path, text, &in->buf, &in->len, err);
    in->data = in->buf;
    return rc;
}

static void dp__input_close(dp__input *in)
{
    if (in->map) munmap(in->map, in->len);
    DP_FREE(in->buf);
    memset(in, 0, sizeof *in);
}

/* ---- output files: the one rule of every file the library writes ------
   PATH a regular file, or nothing yet: written to PATH.tmp, renamed over
   PATH on success (a failure leaves PATH as it was and no PATH.tmp).
   PATH a symbolic link: the rule applied to the name it points to, through
   a chain of at most DP__MAX_LINKS links (a link to nothing creates its
   target; the links stay links). Anything else (a character device such as
   /dev/null, a FIFO) and a link in /proc (where /dev/stdout and /dev/fd/N
   lead: a process's open file): opened and written in place, write errors
   reported. A link to one of this process's own descriptors (/dev/stdout,
   /dev/fd/1, /proc/self/fd/1) writes to a duplicate of that descriptor, so
   that it shares the descriptor's offset: `-o /dev/stdout > FILE` does not
   write over what the program prints. The temp file is opened with
   O_NOFOLLOW: a link planted at PATH.tmp is refused, not written through.
   Before anything is opened dp__out_check refuses a directory, a missing
   or unwritable directory and a read-only file; a regular file replaced
   gives PATH.tmp its owner, group and mode, and one with several hard
   links is copied in place from the complete PATH.tmp (dp__out_put).
   dp_outputs stages several: each PATH.tmp made by dp_outputs_stage and
   written by any writer (by this rule: its own PATH.tmp.tmp renamed over
   it), all put in place by dp_outputs_commit. */
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#define DP__MAX_LINKS 40

typedef struct dp__out {
    FILE *f;
    int direct;              /* written in place, no temp file              */
    int exists;              /* path is an existing file (st: its lstat)    */
    int staged;              /* dp_outputs: tmp made and not yet put        */
    struct stat st;
    int fd;                  /* direct: this process's descriptor to write
                                to (a duplicate of it), or -1               */
    const char *name;        /* the name given, for messages                */
    char path[PATH_MAX];     /* the name written: the given one, or the end
                                of its chain of links                       */
    char tmp[PATH_MAX + 8];  /* path ".tmp"                                 */
    char full[PATH_MAX + 8]; /* not direct: the resolved directory and name,
                                which tells two new names of one file apart */
} dp__out;

static int dp__out_proc(const char *dir)
{
    return strcmp(dir, "/proc") == 0 || strncmp(dir, "/proc/", 6) == 0;
}

/* The descriptor that the link `base` in the resolved directory `dir`
   names when that is this process's /proc/PID/fd, else -1. */
static int dp__out_own_fd(const char *dir, const char *base)
{
    char own[64];
    long v;
    char *e;
    snprintf(own, sizeof own, "/proc/%ld/fd", (long)getpid());
    if (strcmp(dir, own) != 0 || !*base || base[strspn(base, "0123456789")]) return -1;
    errno = 0;
    v = strtol(base, &e, 10);
    return errno || v > INT_MAX ? -1 : (int)v;
}

/* Follows o->path's links: sets o->path to the name to write and
   o->direct when that is not a regular file (or nothing yet). */
static int dp__out_target(dp__out *o, dp_error *err)
{
    char dir[PATH_MAX], buf[PATH_MAX];
    struct stat st;
    int hops = 0;
    for (;;) {
        const char *slash;
        ssize_t n;
        size_t dl;
        if (lstat(o->path, &st) != 0) {
            if (errno == ENOENT) return 0;      /* created by the rename */
            return dp__fail(err, DP_ERR_IO, "%s: cannot look up '%s': %s", o->name, o->path, strerror(errno));
        }
        if (!S_ISLNK(st.st_mode)) { o->direct = !S_ISREG(st.st_mode); o->exists = 1; o->st = st; return 0; }
        if (++hops > DP__MAX_LINKS)
            return dp__fail(err, DP_ERR_IO, "%s: more than %d symbolic links in a chain (a loop?)", o->name, DP__MAX_LINKS);
        /* the link's directory with its own links resolved: the base of a
           relative target, and how a link in /proc is told */
        slash = strrchr(o->path, '/');
        if (!slash) strcpy(buf, ".");
        else if (slash == o->path) strcpy(buf, "/");
        else { memcpy(buf, o->path, (size_t)(slash - o->path)); buf[slash - o->path] = 0; }
        if (!realpath(buf, dir))
            return dp__fail(err, DP_ERR_IO, "%s: cannot resolve the directory of the link '%s': %s", o->name, o->path, strerror(errno));
        if (dp__out_proc(dir)) {
            o->direct = 1;
            o->fd = dp__out_own_fd(dir, slash ? slash + 1 : o->path);
            return 0;
        }
        n = readlink(o->path, buf, sizeof buf);
        if (n < 0) return dp__fail(err, DP_ERR_IO, "%s: cannot read the link '%s': %s", o->name, o->path, strerror(errno));
        if ((size_t)n >= sizeof buf) return dp__fail(err, DP_ERR_ARG, "%s: the link '%s' points to a name too long", o->name, o->path);
        buf[n] = 0;
        dl = buf[0] == '/' ? 0 : strlen(dir);
        if (dl + 1 + (size_t)n + 1 > sizeof o->path)
            return dp__fail(err, DP_ERR_ARG, "%s: the link '%s' leads to a name too long", o->name, o->path);
        if (dl) {
            memcpy(o->path, dir, dl);
            if (o->path[dl - 1] != '/') o->path[dl++] = '/';
        }
        memcpy(o->path + dl, buf, (size_t)n + 1);
    }
}

/* Resolves path by the rule and refuses, before anything is written, what
   the rule cannot write: a directory, a name in a directory that is not
   there or may not be written, a read-only regular file. */
static int dp__out_check(dp__out *o, const char *path, dp_error *err)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash, *base;
    size_t n;
    int rc;
    memset(o, 0, sizeof *o);
    o->fd = -1; o->name = path;
    if (!path || !*path) return dp__fail(err, DP_ERR_ARG, "no output file name given");
    n = strlen(path);
    if (n >= sizeof o->path) return dp__fail(err, DP_ERR_ARG, "%.200s...: output path too long", path);
    memcpy(o->path, path, n + 1);
    if ((rc = dp__out_target(o, err))) return rc;
    if (o->exists && S_ISDIR(o->st.st_mode))
        return dp__fail(err, DP_ERR_IO, "%s: is a directory, not a file to write", path);
    if (o->direct) return 0;
    if (o->exists && ((o->st.st_mode & 0222) == 0 || access(o->path, W_OK) != 0))
        return dp__fail(err, DP_ERR_IO, "%s: read-only file (no write permission): not replaced", path);
    /* the directory the temp file and the rename need */
    slash = strrchr(o->path, '/');
    base = slash ? slash + 1 : o->path;
    if (!slash) strcpy(dir, ".");
    else if (slash == o->path) strcpy(dir, "/");
    else { memcpy(dir, o->path, (size_t)(slash - o->path)); dir[slash - o->path] = 0; }
    if (!*base) return dp__fail(err, DP_ERR_IO, "%s: names a directory, not a file to write", path);
    if (!realpath(dir, real)) {
        int e = errno;
        if (e == ENOENT) return dp__fail(err, DP_ERR_IO, "%s: no such directory '%s'", path, dir);
        return dp__fail(err, DP_ERR_IO, "%s: cannot resolve the directory '%s': %s", path, dir, strerror(e));
    }
    if (access(real, W_OK | X_OK) != 0)
        return dp__fail(err, DP_ERR_IO, "%s: cannot write in the directory '%s': %s", path, dir, strerror(errno));
    n = strlen(real);
    if (n + 1 + strlen(base) + 1 > sizeof o->full)
        return dp__fail(err, DP_ERR_ARG, "%.200s...: output path too long", path);
    memcpy(o->full, real, n);
    if (n == 0 || real[n - 1] != '/') o->full[n++] = '/';
    memcpy(o->full + n, base, strlen(base) + 1);
    n = strlen(o->path);
    memcpy(o->tmp, o->path, n);
    memcpy(o->tmp + n, ".tmp", 5);
    return 0;
}

/* Opens o->tmp for writing (never through a link), with the owner, group
   and mode of the file it replaces (as far as we may set them). */
static int dp__out_temp(dp__out *o, FILE **f, dp_error *err)
{
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0666);
    if (fd < 0) return dp__fail(err, DP_ERR_IO, "%s: cannot create '%s': %s", o->name, o->tmp, strerror(errno));
    if (o->exists && o->st.st_nlink <= 1) {   /* several links: copied, never renamed */
        /* chown first: it may clear set-id bits that the fchmod then sets */
        if (fchown(fd, o->st.st_uid, o->st.st_gid) != 0 && fchown(fd, (uid_t)-1, o->st.st_gid) != 0) { /* not ours to give */ }
        if (fchmod(fd, o->st.st_mode & 07777) != 0) { /* kept as created */ }
    }
    if (!f) {
        if (close(fd) != 0) {
            int e = errno;
            remove(o->tmp);
            return dp__fail(err, DP_ERR_IO, "%s: cannot create '%s': %s", o->name, o->tmp, strerror(e));
        }
        return 0;
    }
    *f = fdopen(fd, "wb");
    if (!*f) {
        int e = errno;
        close(fd);
        remove(o->tmp);
        return dp__fail(err, DP_ERR_IO, "%s: cannot create '%s': %s", o->name, o->tmp, strerror(e));
    }
    return 0;
}

/* Puts the complete o->tmp in place: renamed over o->path, or, for a file
   with several hard links, copied into it in place (truncated, written),
   so that the links stay one file; o->tmp is gone afterwards either way. */
static int dp__out_put(dp__out *o, dp_error *err)
{
    char buf[65536];
    int in, out, e = 0;
    ssize_t k;
    if (!o->exists || o->st.st_nlink <= 1) {
        if (rename(o->tmp, o->path) == 0) return 0;
        e = errno;
        remove(o->tmp);
        return dp__fail(err, DP_ERR_IO, "%s: cannot rename '%s' into place: %s", o->name, o->tmp, strerror(e));
    }
    in = open(o->tmp, O_RDONLY);
    if (in < 0) {
        e = errno;
        remove(o->tmp);
        return dp__fail(err, DP_ERR_IO, "%s: cannot read back '%s': %s", o->name, o->tmp, strerror(e));
    }
    out = open(o->path, O_WRONLY | O_TRUNC | O_NOFOLLOW);
    if (out < 0) {
        e = errno;
        close(in);
        remove(o->tmp);
        return dp__fail(err, DP_ERR_IO, "%s: cannot open (a file of %d links, written in place): %s", o->name,
                        (int)o->st.st_nlink, strerror(e));
    }
    while (!e && (k = read(in, buf, sizeof buf)) != 0) {
        ssize_t w = 0;
        if (k < 0) { if (errno != EINTR) e = errno; continue; }
        while (!e && w < k) {
            ssize_t m = write(out, buf + w, (size_t)(k - w));
            if (m < 0) { if (errno != EINTR) e = errno; }
            else w += m;
        }
    }
    if (close(out) != 0 && !e) e = errno;
    close(in);
    remove(o->tmp);
    if (e) return dp__fail(err, DP_ERR_IO, "%s: write error in place (a file of %d links; it may be cut short): %s",
                           o->name, (int)o->st.st_nlink, strerror(e));
    return 0;
}

static int dp__out_open(dp__out *o, const char *path, dp_error *err)
{
    int fd, rc;
    if ((rc = dp__out_check(o, path, err))) return rc;
    if (o->direct && o->fd >= 0) {
        fd = dup(o->fd);
        if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
            int e = errno;
            if (fd >= 0) close(fd);
            return dp__fail(err, DP_ERR_IO, "%s: cannot write to descriptor %d: %s", path, o->fd, strerror(e));
        }
        return 0;
    }
    if (o->direct) {
        o->f = fopen(o->path, "wb");
        if (!o->f) return dp__fail(err, DP_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
        return 0;
    }
    return dp__out_temp(o, &o->f, err);
}

/* Closes; on rc == 0 renames the temp file into place (written in place:
   nothing to do), otherwise removes it. A write error fails. */
static int dp__out_close(dp__out *o, int rc, dp_error *err)
{
    int e = 0;
    if (!o->f) return rc;
    errno = 0;
    if (fflush(o->f) != 0) e = errno ? errno : -1;
    else if (ferror(o->f)) e = -1;
    if (fclose(o->f) != 0 && !e) e = errno ? errno : -1;
    o->f = NULL;
    /* a writer that saw the stream fail (rc DP_ERR_IO) gets this message,
       which names the file and the reason */
    if (e && (rc == 0 || rc == DP_ERR_IO))
        rc = dp__fail(err, DP_ERR_IO, "%s: write error: %s", o->name, e > 0 ? strerror(e) : "the stream failed");
    if (o->direct) return rc;
    if (rc == 0) return dp__out_put(o, err);
    remove(o->tmp);
    return rc;
}

DPDEF int dp_write_file(const char *path, dp_write_fn fn, void *ctx, dp_error *err)
{
    dp__out o;
    int rc;
    if (!fn) return dp__fail(err, DP_ERR_ARG, "write_file: no writer given");
    if ((rc = dp__out_open(&o, path, err))) return rc;
    dp__ok(err);
    rc = fn(ctx, o.f, err);
    if (rc && err && err->code == DP_OK)
        rc = dp__fail(err, rc > 0 && rc < DP_CODE__COUNT ? (dp_code)rc : DP_ERR_IO, "%s: the writer failed (code %d)", path, rc);
    return dp__out_close(&o, rc, err);
}

/* ---- several outputs put in place together (dp_outputs) ----------------- */
static int dp__out_same(const dp__out *a, const dp__out *b)
{
    if (a->direct || b->direct) return 0;   /* devices, FIFOs: written in place */
    if (a->exists && b->exists) return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
    return !a->exists && !b->exists && strcmp(a->full, b->full) == 0;
}

/* b's resolved name is a's temporary (a's full name and ".tmp") */
static int dp__out_is_tmp_of(const dp__out *a, const dp__out *b)
{
    size_t n = strlen(a->full);
    return !a->direct && !b->direct && strncmp(a->full, b->full, n) == 0 && strcmp(b->full + n, ".tmp") == 0;
}

DPDEF int dp_outputs_add(dp_outputs *os, const char *path, dp_error *err)
{
    dp__out *o, *all;
    int rc, i;
    if (!os || os->n < 0) return dp__fail(err, DP_ERR_ARG, "outputs_add: no set given");
    all = (dp__out *)DP_REALLOC(os->impl, sizeof(dp__out) * (size_t)(os->n + 1));
    if (!all) return dp__fail(err, DP_ERR_NOMEM, "%s: out of memory adding an output", path ? path : "?");
    os->impl = all;
    o = &all[os->n];
    if ((rc = dp__out_check(o, path, err))) return rc;
    for (i = 0; i < os->n; i++) {
        if (dp__out_same(&all[i], o))
            return dp__fail(err, DP_ERR_ARG, "%s and %s: two outputs naming the same file", all[i].name, path);
        if (dp__out_is_tmp_of(&all[i], o) || dp__out_is_tmp_of(o, &all[i]))
            return dp__fail(err, DP_ERR_ARG, "%s and %s: one output is the other's temporary file (NAME.tmp)", all[i].name, path);
    }
    os->n++;
    dp__ok(err);
    return 0;
}

DPDEF int dp_outputs_input(const dp_outputs *os, const char *path, dp_error *err)
{
    const dp__out *all = os ? (const dp__out *)os->impl : NULL;
    struct stat st;
    int i;
    if (!path || !all || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    for (i = 0; i < os->n; i++)
        if (!all[i].direct && all[i].exists && all[i].st.st_dev == st.st_dev && all[i].st.st_ino == st.st_ino)
            return dp__fail(err, DP_ERR_ARG, "output %s is the input %s (it would be replaced)", all[i].name, path);
    return 0;
}

DPDEF int dp_outputs_stage(dp_outputs *os, int i, const char **name, dp_error *err)
{
    dp__out *o;
    int rc;
    if (!os || !name || i < 0 || i >= os->n || !os->impl) return dp__fail(err, DP_ERR_ARG, "outputs_stage: no output %d", i);
    o = &((dp__out *)os->impl)[i];
    *name = NULL;
    if (o->direct) { *name = o->name; return 0; }   /* in place, now */
    if ((rc = dp__out_temp(o, NULL, err))) return rc;
    o->staged = 1;
    *name = o->tmp;
    return 0;
}

DPDEF int dp_outputs_commit(dp_outputs *os, dp_error *err)
{
    dp__out *all = os ? (dp__out *)os->impl : NULL;
    int i, rc = 0;
    for (i = 0; all && i < os->n; i++) {
        if (!all[i].staged) continue;
        all[i].staged = 0;
        if (rc) remove(all[i].tmp);
        else rc = dp__out_put(&all[i], err);
    }
    return rc;
}

DPDEF void dp_outputs_free(dp_outputs *os)
{
    dp__out *all;
    int i;
    if (!os) return;
    all = (dp__out *)os->impl;
    for (i = 0; all && i < os->n; i++)
        if (all[i].staged) remove(all[i].tmp);
    DP_FREE(all);
    os->impl = NULL;
    os->n = 0;
}

/* ---- enum names: one table per enum, read both ways --------------------- */
static const char *dp__name_of(const char *const *names, int n, int i)
{
    return i >= 0 && i < n ? names[i] : "?";
}

/* the index of name in names[0..n), or -1 */
static int dp__name_index(const char *const *names, int n, const char *name)
{
    int i;
    for (i = 0; i < n; i++) if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

/* ---- text scanning, shared by every reader -------------------------- */
/* A UTF-8 byte-order mark (EF BB BF, which some editors put at the start
   of a file) is skipped by every text reader and dp_format_detect. */
static void dp__skip_bom(const char **buf, size_t *len)
{
    const unsigned char *b = (const unsigned char *)*buf;
    if (*len >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) { *buf += 3; *len -= 3; }
}

typedef struct dp__text {
    const char *name;      /* file name for messages                      */
    const char *start;     /* the whole text: start .. end                 */
    const char *p, *end;   /* unread part                                  */
    int line;              /* number of the line last returned            */
    char *buf;             /* the current line, NUL-terminated, no '\n'   */
    size_t cap;
    int nomem;             /* a line could not be read: out of memory     */
    char qname[256];       /* name, elided in the middle when long (dp__qn) */
} dp__text;

static int dp__text_init(dp__text *t, const char *buf, size_t len, const char *name, int checked, dp_error *err)
{
    size_t i;
    t->name = dp__qn(t->qname, sizeof t->qname, name ? name : "<memory>");
    t->start = t->p = buf; t->end = buf + len; t->line = 0; t->buf = NULL; t->cap = 0; t->nomem = 0;
    /* Refuse binary data up front: NUL or control bytes other than tab/CR/LF
       (unless the caller did: checked) */
    if (!checked && (i = dp__binary_at(buf, len)) < len) return dp__binary_fail(err, t->name, buf, i);
    return 0;
}

/* Next line as it stands in the text, *s .. *s + *n, without its '\n'
   and a '\r' before it. Returns 1 when a line was read, 0 at the end. */
static int dp__text_view(dp__text *t, const char **s, size_t *n)
{
    const char *e;
    if (t->p >= t->end) return 0;
    *s = t->p;
    e = (const char *)memchr(t->p, '\n', (size_t)(t->end - t->p));
    if (!e) e = t->end;
    t->p = e < t->end ? e + 1 : e;
    t->line++;
    *n = (size_t)(e - *s);
    if (*n && e[-1] == '\r') --*n;
    return 1;
}

/* t->buf with room for n bytes and a NUL (doubling): 0, or -1 (t->nomem)
   when out of memory. */
static int dp__text_room(dp__text *t, size_t n)
{
    size_t cap;
    char *nb;
    if (n + 1 <= t->cap) return 0;
    cap = n + 1 > 2 * t->cap ? n + 1 : 2 * t->cap;
    if (!(nb = (char *)DP_REALLOC(t->buf, cap))) { t->nomem = 1; return -1; }
    t->buf = nb; t->cap = cap;
    return 0;
}

/* Next line into t->buf (comments after '#' removed when strip_comments).
   Returns 1 when a line was read, 0 at the end, negative on no memory. */
static int dp__text_line(dp__text *t, int strip_comments)
{
    const char *s, *h;
    size_t n;
    if (!dp__text_view(t, &s, &n)) return 0;
    if (strip_comments && (h = (const char *)memchr(s, '#', n)) != NULL) n = (size_t)(h - s);
    if (dp__text_room(t, n)) return -1;
    memcpy(t->buf, s, n);
    t->buf[n] = 0;
    return 1;
}

static void dp__text_free(dp__text *t) { DP_FREE(t->buf); t->buf = NULL; }

/* Splits s in place at spaces/tabs; returns the number of tokens (<= max). */
static int dp__split(char *s, char **tok, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t') *s++ = 0;
        if (!*s) break;
        if (n == max) return max + 1;
        tok[n++] = s;
        while (*s && *s != ' ' && *s != '\t') s++;
    }
    return n;
}

/* The value of a plain decimal number s, in *out, when it is exactly
   what strtod gives: an optional '-', digits with an optional '.', an
   optional exponent (e or E, an optional sign, digits), nothing else,
   whose digits make an integer w <= 2^53 and whose power of ten p is in
   -22..22. Then w and 10^|p| are exact doubles and w * 10^p (or w /
   10^-p) is one correctly rounded operation, so it equals strtod's
   correctly rounded result bit for bit (Clinger's fast path; "-0" gives
   -0.0 as strtod does). Returns 0 for anything else (a 17-digit
   mantissa, 1e300, "+1", " 1", "0x10", "inf"), which the caller gives
   to strtod. Only where doubles are evaluated in double precision
   (FLT_EVAL_METHOD 0: every x86-64 or ARM compiler), else never. */
static int dp__num_fast(const char *s, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    static const double p10[23] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    uint64_t w = 0;
    int neg = *s == '-', digits = 0, frac = 0, p = 0;
    double v;
    s += neg;
    for (; *s >= '0' && *s <= '9'; s++, digits++)
        if ((w = 10 * w + (uint64_t)(*s - '0')) > (1ULL << 53)) return 0;   /* not exact: strtod */
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, digits++, frac++)
            if ((w = 10 * w + (uint64_t)(*s - '0')) > (1ULL << 53)) return 0;
    if (digits == 0) return 0;
    if (*s == 'e' || *s == 'E') {
        int eneg, ed = 0;
        s++;
        eneg = *s == '-';
        if (*s == '-' || *s == '+') s++;
        for (; *s >= '0' && *s <= '9'; s++, ed++) {
            if (p > 1000) return 0;
            p = 10 * p + (*s - '0');
        }
        if (ed == 0) return 0;
        if (eneg) p = -p;
    }
    if (*s) return 0;
    p -= frac;
    if (p < -22 || p > 22) return 0;
    v = p >= 0 ? (double)w * p10[p] : (double)w / p10[-p];
    *out = neg ? -v : v;
    return 1;
#else
    (void)s; (void)out;
    return 0;
#endif
}

/* A finite number >= 0 (or any sign when allow_negative). */
static int dp__num(const char *s, double *out, int allow_negative)
{
    char *e;
    double v;
    if (!s || !*s) return -1;
    if (dp__num_fast(s, &v)) {   /* strtod's value, without strtod */
        if (!allow_negative && v < 0) return -3;
        *out = v;
        return 0;
    }
    errno = 0;
    v = strtod(s, &e);
    if (e == s || *e) return -1;            /* not a number            */
    if (v != v || v == HUGE_VAL || v == -HUGE_VAL || (errno == ERANGE && fabs(v) > 1)) return -2; /* nan/inf/overflow */
    if (!allow_negative && v < 0) return -3;
    *out = v;
    return 0;
}

/* Code for a dp__num failure: unreadable text is a parse error, a number
   that is not finite or negative is out of range. */
static dp_code dp__num_code(int rc) { return rc == -1 ? DP_ERR_PARSE : DP_ERR_RANGE; }

static const char *dp__num_problem(int rc)
{
    return rc == -2 ? "is not finite" : rc == -3 ? "is negative" : "is not a number";
}

/* A decimal integer in [lo, hi]. */
static int dp__int(const char *s, long long lo, long long hi, long long *out)
{
    char *e;
    long long v;
    if (!s || !*s) return -1;
    {   /* [-]digits, up to 18 of them: the value strtoll gives, without it */
        const char *d = s + (*s == '-');
        int k = 0;
        v = 0;
        for (; k < 18 && d[k] >= '0' && d[k] <= '9'; k++) v = 10 * v + (d[k] - '0');
        if (k > 0 && d[k] == 0) {
            if (*s == '-') v = -v;
            if (v < lo || v > hi) return -2;
            *out = v;
            return 0;
        }
    }
    errno = 0;
    v = strtoll(s, &e, 10);
    if (e == s || *e) return -1;
    if (errno == ERANGE || v < lo || v > hi) return -2;
    *out = v;
    return 0;
}

/* A count in [lo, hi] (hi a DP_MAX_* limit): 0, or the code of its
   failure: `bad` when unreadable, RANGE for integer overflow or below lo,
   LIMIT above hi (refused before anything is sized by it). */
static dp_code dp__count(const char *s, long long lo, long long hi, long long *out, dp_code bad)
{
    long long v;
    int r = dp__int(s, LLONG_MIN, LLONG_MAX, &v);
    if (r == -1) return bad;
    if (r || v < lo) return DP_ERR_RANGE;
    if (v > hi) return DP_ERR_LIMIT;
    *out = v;
    return DP_OK;
}

/* A hint that *p is read soon (GCC and clang; else nothing): the loops
   over an op's edges (the simulator's, the rollout's) read each edge's
   bytes or other end through the edge index, a cache miss per edge on
   graphs whose edges are stored in the other direction's order, so they
   ask DP__AHEAD edges ahead. */
#if defined(__GNUC__) || defined(__clang__)
#define DP__PREFETCH(p) __builtin_prefetch(p)
#else
#define DP__PREFETCH(p) ((void)(p))
#endif
#define DP__AHEAD 8

/* DP__INLINE: inlined wherever called (gcc -O2 leaves a small function
   called from many places out of line, a call in an inner loop). */
#if defined(__GNUC__) || defined(__clang__)
#define DP__INLINE static inline __attribute__((always_inline))
#else
#define DP__INLINE static inline
#endif

/* Little-endian numbers read byte by byte (one load on a little-endian
   machine, the same values on any other). */
DP__INLINE uint32_t dp__le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

DP__INLINE uint64_t dp__le64(const unsigned char *p) { return (uint64_t)dp__le32(p) | (uint64_t)dp__le32(p + 4) << 32; }

/* The trailing zero bits of x != 0. */
DP__INLINE int dp__ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    for (; !(x & 1); x >>= 1) n++;
    return n;
#endif
}

/* fn(ctx, lo, hi) over [0, n) in nt contiguous parts, the first on the
   calling thread and each other on a thread of its own (one whose thread
   cannot start runs on the calling thread after the first). For loops
   whose iterations write disjoint outputs and read nothing another
   writes: the results are the same, bit for bit, on any number of
   threads. Parts of fewer than DP__PAR_MIN iterations are not worth a
   thread: a short loop runs on the calling thread alone. */
#define DP__PAR_MIN 4096
#define DP__PAR_MAX 64

typedef struct dp__par_part {
    void (*fn)(void *ctx, int lo, int hi);
    void *ctx;
    int lo, hi;
} dp__par_part;

static void *dp__par_main(void *arg)
{
    dp__par_part *q = (dp__par_part *)arg;
    q->fn(q->ctx, q->lo, q->hi);
    return NULL;
}

static void dp__par_for(int nt, int n, void (*fn)(void *ctx, int lo, int hi), void *ctx)
{
    dp__par_part part[DP__PAR_MAX];
    pthread_t th[DP__PAR_MAX];
    int ok[DP__PAR_MAX], i;
    if (nt > n / DP__PAR_MIN) nt = n / DP__PAR_MIN;
    if (nt > DP__PAR_MAX) nt = DP__PAR_MAX;
    if (nt < 2) { fn(ctx, 0, n); return; }
    for (i = 0; i < nt; i++) {
        part[i].fn = fn; part[i].ctx = ctx;
        part[i].lo = (int)((long long)n * i / nt);
        part[i].hi = (int)((long long)n * (i + 1) / nt);
    }
    for (i = 1; i < nt; i++) ok[i] = pthread_create(&th[i], NULL, dp__par_main, &part[i]) == 0;
    fn(ctx, part[0].lo, part[0].hi);
    for (i = 1; i < nt; i++) {
        if (ok[i]) pthread_join(th[i], NULL);
        else fn(ctx, part[i].lo, part[i].hi);
    }
}

/* ======================================================================
   >>graph
   While building, the per-op and per-edge arrays are growable arrays
   (dp__arr, grown only through DP__GROW, which fails cleanly), op names and
   edges are indexed by a small hash table of ids (dp__index); after the
   last op or edge is added nothing else is allocated until
   dp_graph_finalize adds the CSR adjacency and the topo order.
   ====================================================================== */
#define DP__KIND_TEXT(id, text) text,
static const char *const dp__kind_names[] = { DP_KINDS(DP__KIND_TEXT) };
#undef DP__KIND_TEXT

DPDEF const char *dp_kind_name(dp_kind kind) { return dp__name_of(dp__kind_names, DP_KIND__COUNT, (int)kind); }

DPDEF int dp_kind_parse(const char *name, dp_kind *out)
{
    int k = dp__name_index(dp__kind_names, DP_KIND__COUNT, name);
    if (k >= 0) *out = (dp_kind)k;
    return k < 0 ? -1 : 0;
}

/* ---- growable arrays that fail cleanly -----------------------------------
   The per-op and per-edge arrays of a graph being built and the readers'
   lists. An array is a pointer to its first element (NULL: empty) in a
   block of DP_REALLOC that starts with its length and capacity, so a
   finished graph's fields are plain arrays. Only DP__GROW allocates
   (capacity doubling) and it reports failure (-1, the array unchanged):
   DP__PUSH checks it; DP__PUT appends into capacity reserved before.
   An array's first block comes zeroed (dp__zalloc), and while nothing has been
   written past its length (zero: until it is cleared or grown) its room
   holds zero bytes, which DP__PUT_Z appends by counting them only: the
   fresh pages of a large block (the calloc of a fresh mapping) stay
   untouched, on a virtual machine a few microseconds each, and unmapped
   (no resident memory) until written. A reader's graph in which most
   ops have no workspace, resident bytes, shape, kind or source names (or
   edges no bytes) leaves those arrays so (bench/RESULTS.md part 3), and
   the checks of a graph fresh from a reader (dp__finalize) skip an array
   none of whose elements was written (dp__zeros), rather than touch its
   pages to add zeros. */
typedef struct dp__arr {
    size_t len, cap, zero;
    size_t wrote;   /* the elements DP__PUT and DP__PUT_Z stored (not those only counted) */
} dp__arr;   /* 32 bytes: the elements stay aligned */
#define DP__HDR(a)  ((dp__arr *)(void *)(a) - 1)
#define DP__LEN(a)  ((a) ? DP__HDR(a)->len : 0)
#define DP__CAP(a)  ((a) ? DP__HDR(a)->cap : 0)
static int dp__grow(void *arrp, size_t elem, size_t need)
{
    void *a, *b;
    dp__arr *h;
    size_t cap;
    memcpy(&a, arrp, sizeof a);   /* arrp is the address of some T* */
    cap = a ? DP__HDR(a)->cap : 0;
    if (need <= cap) return 0;
    if (need < 2 * cap) need = 2 * cap;
    if (need < 4) need = 4;
    if (need > ((size_t)-1 - sizeof *h) / elem) return -1;
    b = a ? DP_REALLOC((void *)DP__HDR(a), sizeof *h + elem * need) : dp__zalloc(sizeof *h + elem * need);
    if (!b) return -1;
    h = (dp__arr *)b;
    h->zero = !a;   /* a block that grew: its new room is not known to be zero */
    h->cap = need;
    b = h + 1;
    memcpy(arrp, &b, sizeof b);
    return 0;
}
#define DP__GROW(a, need) ((a) && (size_t)(need) <= DP__HDR(a)->cap ? 0 : dp__grow((void *)&(a), sizeof *(a), (size_t)(need)))
#define DP__PUT(a, v)     ((a)[DP__HDR(a)->len++] = (v), DP__HDR(a)->wrote++)   /* room reserved */
/* DP__PUT of v, whose bytes are all zero when iszero: then written only
   where the room is not known to be zero */
#define DP__PUT_Z(a, v, iszero) ((iszero) && DP__HDR(a)->zero ? (void)DP__HDR(a)->len++ : (void)DP__PUT(a, v))
static int dp__zero_bits(double v) { uint64_t b; memcpy(&b, &v, sizeof b); return b == 0; }   /* +0.0, not -0.0 */
#define DP__PUSH(a, v)    (DP__GROW(a, DP__LEN(a) + 1) ? -1 : (DP__PUT(a, v), 0))
#define DP__CLEAR(a)      do { if (a) { DP__HDR(a)->len = 0; DP__HDR(a)->zero = 0; DP__HDR(a)->wrote = 0; } } while (0)
/* Every element of a is +0.0 (or 0, NULL): each was appended by DP__PUT_Z
   as a zero into zeroed room. True only while nothing but DP__PUT and
   DP__PUT_Z wrote its elements: of a graph, until a reader returns it. */
static int dp__zeros(const void *a) { return !a || DP__HDR(a)->wrote == 0; }
#define DP__ARRFREE(a)    do { if (a) DP_FREE(DP__HDR(a)); (a) = NULL; } while (0)

/* ---- an index of ids by key ---------------------------------------------
   Open addressing with linear probing, at most half full. A slot holds
   the top 32 bits of the key's hash (which also give its position) and
   id + 1 (0: empty); the key itself is read from the graph (the op's
   name, the edge's endpoints), so the table holds no strings. Growing is
   its only allocation and is done before anything else changes. */
typedef struct dp__index { size_t cap; uint64_t *slot; } dp__index;

/* The hash of the n bytes at s (an op's name), in memory only: eight
   bytes at a time, each word multiplied in, then mixed (dp__mix). */
static uint64_t dp__hash_mem(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
    size_t i;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
    }
    /* the last 0..7 bytes as the words above are read, in at most three
       loads (a byte loop was 4% of the instructions of reading a chain) */
    w = 0;
    i = 0;
    if (n & 4) { uint32_t v; memcpy(&v, s, 4); w = v; i = 4; }
    if (n & 2) { uint16_t v; memcpy(&v, s + i, 2); w |= (uint64_t)v << (8 * i); i += 2; }
    if (n & 1) w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    return dp__mix(h ^ w);
}

static uint64_t dp__hash_str(const char *s) { return dp__hash_mem(s, strlen(s)); }

static uint64_t dp__hash_edge(int src, int dst) { return dp__mix(((uint64_t)(uint32_t)src << 32) | (uint32_t)dst); }

static void dp__index_put(dp__index *ix, uint64_t h, int id)
{
    size_t i = (size_t)(h >> 32) & (ix->cap - 1);
    while (ix->slot[i]) i = (i + 1) & (ix->cap - 1);
    ix->slot[i] = (h & 0xffffffff00000000ULL) | (uint32_t)(id + 1);
}

/* Room for `count` ids in *pix (made on first use); 0, or -1 when out of
   memory (the index unchanged). */
static int dp__index_reserve(void **pix, size_t count)
{
    dp__index *ix = (dp__index *)*pix, *nx;
    size_t cap = 16, i;
    if (ix && 2 * count <= ix->cap) return 0;
    while (cap < 2 * count) cap *= 2;
    nx = (dp__index *)DP_MALLOC(sizeof *nx + cap * sizeof(uint64_t));
    if (!nx) return -1;
    nx->cap = cap; nx->slot = (uint64_t *)(nx + 1);
    memset(nx->slot, 0, cap * sizeof(uint64_t));
    if (ix) {
        for (i = 0; i < ix->cap; i++)
            if (ix->slot[i]) dp__index_put(nx, ix->slot[i], (int)(uint32_t)ix->slot[i] - 1);
        DP_FREE(ix);
    }
    *pix = nx;
    return 0;
}

/* The name of n bytes at s (no NUL among them) is name. */
static int dp__name_is(const char *name, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) if (name[i] != s[i]) return 0;   /* stops at name's NUL */
    return name[n] == 0;
}

/* The id of the name of n bytes at s (hash h) in index ixp over names[]
   (ops' or weights'). */
static int dp__index_find_mem(const void *ixp, char *const *names, const char *s, size_t n, uint64_t h)
{
    const dp__index *ix = (const dp__index *)ixp;
    size_t i;
    if (!ix) return -1;
    for (i = (size_t)(h >> 32) & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1))
        if ((ix->slot[i] >> 32) == (h >> 32)) {
            int id = (int)(uint32_t)ix->slot[i] - 1;
            if (dp__name_is(names[id], s, n)) return id;
        }
    return -1;
}

static int dp__index_find_str(const void *ixp, char *const *names, const char *name, uint64_t h)
{
    return dp__index_find_mem(ixp, names, name, strlen(name), h);
}

static int dp__index_find_name(const dp_graph *g, const char *name, uint64_t h)
{
    return dp__index_find_str(g->dp__names, g->name, name, h);
}

static int dp__index_find_edge(const dp_graph *g, int src, int dst, uint64_t h)
{
    const dp__index *ix = (const dp__index *)g->dp__edges;
    size_t i;
    if (!ix) return -1;
    for (i = (size_t)(h >> 32) & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1))
        if ((ix->slot[i] >> 32) == (h >> 32)) {
            int e = (int)(uint32_t)ix->slot[i] - 1;
            if (g->src[e] == src && g->dst[e] == dst) return e;
        }
    return -1;
}

/* ---- the op names' pool ---------------------------------------------------
   Op names are kept in blocks of at least 64 KiB (g->dp__pool, the newest
   first), which never move, so that g->name[i] stays valid as ops are
   added, and which are freed together: no allocation per name. Each
   block is twice the last, up to 4 MiB, so that a large graph's names
   lie in blocks that get huge pages (see DP_MALLOC) and cost a fault and
   a TLB entry each, not one per 4 KiB (a name looked up at random, as an
   edge's source is, is a TLB miss each in small pages). Each name
   is stored after a byte holding its length (DP_MAX_NAME < 256), so that
   a reader compares a name with a candidate's at the cost of one byte
   when their lengths differ (dp__op_name_is). */
typedef struct dp__pool { struct dp__pool *next; size_t used, cap; } dp__pool;   /* the bytes follow */

/* n bytes from g's pool, or NULL when out of memory */
static char *dp__pool_alloc(dp_graph *g, size_t n)
{
    dp__pool *b = (dp__pool *)g->dp__pool;
    char *r;
    if (!b || b->cap - b->used < n) {
        /* whole powers of two less 16 bytes (see DP_MALLOC); the first
           block is sized for the ops the graph has room for (a reader
           reserves it), at 8 bytes a name: blocks of 128 KiB to 1 MiB
           are malloc's, in 4 KiB pages, a fault each (about 480 of the
           10^6-op chain's read) */
        size_t size = !b ? 65536 : 2 * (sizeof *b + b->cap + 16), cap;
        dp__pool *nb;
        if (!b) while (size < ((size_t)1 << 22) && size < 8 * DP__CAP(g->name)) size *= 2;
        if (size > ((size_t)1 << 22)) size = (size_t)1 << 22;
        cap = size - 16 - sizeof *b;
        if (cap < n) cap = n;
        nb = (dp__pool *)DP_MALLOC(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->next = b; nb->used = 0; nb->cap = cap;
        g->dp__pool = b = nb;
    }
    r = (char *)(b + 1) + b->used;
    b->used += n;
    return r;
}

/* A copy of name (len bytes, NUL-terminated) in g's pool, after its
   length byte, or NULL when out of memory: what g->name[v] points to. */
static char *dp__pool_name(dp_graph *g, const char *name, size_t len)
{
    char *copy = dp__pool_alloc(g, len + 2);
    if (!copy) return NULL;
    *copy++ = (char)len;
    memcpy(copy, name, len + 1);
    return copy;
}

/* The name of op v of g (in the pool) is the n bytes at s. */
static int dp__op_name_is(const dp_graph *g, int v, const char *s, size_t n)
{
    const char *name = g->name[v];
    return (unsigned char)name[-1] == n && n > 0 && name[n - 1] == s[n - 1] && memcmp(name, s, n) == 0;
}

static void dp__pool_free(dp_graph *g)
{
    dp__pool *b = (dp__pool *)g->dp__pool, *next;
    for (; b; b = next) { next = b->next; DP_FREE(b); }
    g->dp__pool = NULL;
}

DPDEF void dp_graph_init(dp_graph *g)
{
    memset(g, 0, sizeof *g);
    g->unit_speed = 1.0;
    g->unit_bandwidth = 1.0;
    g->format = DP_FORMAT_NATIVE;
}

static void dp__free_edge_set(dp_graph *g)
{
    DP_FREE(g->dp__edges);
    g->dp__edges = NULL;
}

DPDEF void dp_graph_free(dp_graph *g)
{
    int i;
    if (!g) return;
    dp__pool_free(g);   /* the op names */
    for (i = 0; i < (int)DP__LEN(g->source); i++) DP_FREE(g->source[i]);
    DP__ARRFREE(g->source); DP__ARRFREE(g->n_source);
    for (i = 0; i < (int)DP__LEN(g->weight_name); i++) DP_FREE(g->weight_name[i]);
    DP__ARRFREE(g->name); DP__ARRFREE(g->kind); DP__ARRFREE(g->compute); DP__ARRFREE(g->out_bytes);
    DP__ARRFREE(g->mem_bytes); DP__ARRFREE(g->resident); DP__ARRFREE(g->dev_time); DP__ARRFREE(g->src); DP__ARRFREE(g->dst);
    DP__ARRFREE(g->weight_name); DP__ARRFREE(g->weight_bytes); DP__ARRFREE(g->use_op); DP__ARRFREE(g->use_weight);
    DP_FREE(g->wuse_off); DP_FREE(g->wuse); DP_FREE(g->wop_off); DP_FREE(g->wop);
    DP_FREE(g->dp__wnames);
    DP__ARRFREE(g->rows); DP__ARRFREE(g->cols); DP__ARRFREE(g->arg);
    DP__ARRFREE(g->bytes);
    DP_FREE(g->out_off); DP_FREE(g->out_edge); DP_FREE(g->in_off); DP_FREE(g->in_edge);
    DP_FREE(g->topo);
    DP_FREE(g->dp__names);
    dp__free_edge_set(g);
    dp_graph_init(g);
}

/* The op named name (len bytes) in a graph whose op i is named "op<i>"
   (dp__numbered): i when name is "op<i>" as dp__num_name writes it (no
   sign, no leading zero) and i an op, else -1. */
static int dp__numbered_find(const dp_graph *g, const char *name, size_t len)
{
    long long v = 0;
    size_t i;
    if (len < 3 || len > 12 || name[0] != 'o' || name[1] != 'p' || (name[2] == '0' && len > 3)) return -1;
    for (i = 2; i < len; i++) {
        if (name[i] < '0' || name[i] > '9') return -1;
        v = v * 10 + (name[i] - '0');   /* at most 10 digits */
    }
    return v < g->n_ops ? (int)v : -1;
}

DPDEF int dp_graph_find(const dp_graph *g, const char *name)
{
    if (!name) return -1;
    if (g->dp__numbered) return dp__numbered_find(g, name, strlen(name));
    return dp__index_find_name(g, name, dp__hash_str(name));
}

DPDEF const char *dp_graph_source(const dp_graph *g, int v, int i)
{
    const char *s;
    if (!g || v < 0 || v >= g->n_ops || !g->n_source || i < 0 || i >= g->n_source[v]) return NULL;
    for (s = g->source[v]; i > 0; i--) s += strlen(s) + 1;
    return s;
}

static int dp__check_cost(double v, const char *what, const char *opname, dp_error *err)
{
    if (v != v || v == HUGE_VAL || v == -HUGE_VAL)
        return dp__fail(err, DP_ERR_RANGE, "op '%s': %s '%g' is not finite", opname, what, v);
    if (v < 0) return dp__fail(err, DP_ERR_RANGE, "op '%s': %s '%.10g' is negative", opname, what, v);
    return 0;
}

/* A name of n bytes (no NUL among them) that an op or a weight may have. */
static int dp__valid_name_n(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || n > DP_MAX_NAME) return 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= ' ' || ch == '#' || ch == '=' || ch == ',' || ch == 127) return 0;
    }
    return 1;
}

static int dp__valid_name(const char *s) { return dp__valid_name_n(s, strlen(s)); }

/* A real op's output shape rows x cols (both 0 for an opaque op). */
static int dp__shape_ok(int rows, int cols)
{
    return rows >= 0 && cols >= 0 && rows <= (1 << 20) && cols <= (1 << 20) &&
           (double)rows * cols <= (double)(1 << 28) && (rows == 0) == (cols == 0);
}

/* prefix (at most 8 bytes) and the decimal digits of n >= 0 in buf[32]:
   "op12", "t7", as snprintf's "%s%d" writes them, without its cost per
   op; returns the length. */
static size_t dp__num_name(char *buf, const char *prefix, int n)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char digits[12];
    size_t p = strlen(prefix), k = sizeof digits;
    for (; n >= 100; n /= 100) {   /* two digits at a time, from the last */
        k -= 2;
        memcpy(digits + k, pairs + 2 * (n % 100), 2);
    }
    if (n >= 10) { k -= 2; memcpy(digits + k, pairs + 2 * n, 2); }
    else digits[--k] = (char)('0' + n);
    memcpy(buf, prefix, p);
    memcpy(buf + p, digits + k, sizeof digits - k);
    buf[p + sizeof digits - k] = 0;
    return p + sizeof digits - k;
}

/* dp_graph_add_op; indexed 0 (dp__graph_push_op): without the name index. */
static int dp__op_add(dp_graph *g, const dp_op_desc *op, int *id, int indexed, dp_error *err)
{
    char auto_name[32];
    const char *name;
    char *copy = NULL, *sources = NULL;
    size_t src_len = 0, name_len;
    int n = g->n_ops, k, rc;
    uint64_t h;
    if (g->finalized) return dp__fail(err, DP_ERR_ARG, "graph already finalised; cannot add op");
    if (n >= DP_MAX_OPS) return dp__fail(err, DP_ERR_LIMIT, "more than %d ops (the limit DP_MAX_OPS)", DP_MAX_OPS);
    name = op->name ? op->name : auto_name;   /* "op12": a valid name */
    name_len = op->name ? strlen(name) : dp__num_name(auto_name, "op", n);
    if (op->name && !dp__valid_name_n(name, name_len))
        return dp__fail(err, DP_ERR_PARSE, "op name '%.*s' is empty, longer than %d bytes or holds a space, '#', '=' or ','",
                        DP_MAX_NAME + 8, name, DP_MAX_NAME);
    if ((int)op->kind < 0 || op->kind >= DP_KIND__COUNT)
        return dp__fail(err, DP_ERR_RANGE, "op '%s': kind %d unknown", name, (int)op->kind);
    if (!(op->compute >= 0 && op->compute < HUGE_VAL && op->out_bytes >= 0 && op->out_bytes < HUGE_VAL &&
          op->mem_bytes >= 0 && op->mem_bytes < HUGE_VAL && op->resident >= 0 && op->resident < HUGE_VAL)) {
        /* one of them is NaN, infinite or negative: the first, told */
        if ((rc = dp__check_cost(op->compute, "compute cost", name, err))) return rc;
        if ((rc = dp__check_cost(op->out_bytes, "output bytes", name, err))) return rc;
        if ((rc = dp__check_cost(op->mem_bytes, "memory bytes", name, err))) return rc;
        if ((rc = dp__check_cost(op->resident, "resident bytes", name, err))) return rc;
    }
    if (!dp__shape_ok(op->rows, op->cols))
        return dp__fail(err, DP_ERR_RANGE, "op '%s': shape %dx%d out of range (both 0, or 1..2^20 with at most 2^28 elements)", name, op->rows, op->cols);
    if (op->arg < 0) return dp__fail(err, DP_ERR_RANGE, "op '%s': arg %d is negative", name, op->arg);
    if (op->n_source < 0 || op->n_source > DP_MAX_OPS || (op->n_source > 0 && !op->source))
        return dp__fail(err, DP_ERR_ARG, "op '%s': %d source names%s", name, op->n_source, op->n_source > 0 ? " but no array" : " (0..DP_MAX_OPS)");
    for (k = 0; k < op->n_source; k++) {
        if (!op->source[k] || !op->source[k][0])
            return dp__fail(err, DP_ERR_ARG, "op '%s': source name %d is %s", name, k, op->source[k] ? "empty" : "NULL");
        src_len += strlen(op->source[k]) + 1;
        if (src_len > DP_MAX_FILE_BYTES)
            return dp__fail(err, DP_ERR_LIMIT, "op '%s': source names longer than %zu bytes in all (DP_MAX_FILE_BYTES)", name, (size_t)DP_MAX_FILE_BYTES);
    }
    h = indexed ? dp__hash_mem(name, name_len) : 0;
    if (indexed && (k = dp__index_find_mem(g->dp__names, g->name, name, name_len, h)) >= 0)
        return dp__fail(err, DP_ERR_GRAPH, "duplicate op name '%s' (first defined as op %d)", name, k);
    if (op->n_dev_time < 0 || op->n_dev_time > DP_MAX_DEVICES)
        return dp__fail(err, op->n_dev_time < 0 ? DP_ERR_RANGE : DP_ERR_LIMIT, "op '%s': %d per-device times (limit %d, DP_MAX_DEVICES)", name, op->n_dev_time, DP_MAX_DEVICES);
    if (op->n_dev_time > 0) {
        if (n > 0 && g->n_dev_time == 0)
            return dp__fail(err, DP_ERR_GRAPH, "op '%s': per-device times given, but earlier ops have none", name);
        if (g->n_dev_time && op->n_dev_time != g->n_dev_time)
            return dp__fail(err, DP_ERR_GRAPH, "op '%s': %d per-device times, expected %d", name, op->n_dev_time, g->n_dev_time);
        for (k = 0; k < op->n_dev_time; k++) {
            double t = op->dev_time[k];
            if (t != t || t == HUGE_VAL || t == -HUGE_VAL)
                return dp__fail(err, DP_ERR_RANGE, "op '%s': time on device %d '%g' is not finite", name, k, t);
        }
    } else if (g->n_dev_time > 0) {
        return dp__fail(err, DP_ERR_GRAPH, "op '%s': no per-device times, but earlier ops have %d", name, g->n_dev_time);
    }
    /* reserve everything first: a failure leaves the graph as it was */
    {
        size_t cnt = (size_t)n + 1, ndt = (size_t)(n == 0 ? op->n_dev_time : g->n_dev_time);
        if (DP__GROW(g->name, cnt) || DP__GROW(g->kind, cnt) || DP__GROW(g->compute, cnt) ||
            DP__GROW(g->out_bytes, cnt) || DP__GROW(g->mem_bytes, cnt) || DP__GROW(g->resident, cnt) || DP__GROW(g->rows, cnt) ||
            DP__GROW(g->cols, cnt) || DP__GROW(g->arg, cnt) || (ndt && DP__GROW(g->dev_time, cnt * ndt)) ||
            DP__GROW(g->source, cnt) || DP__GROW(g->n_source, cnt) ||
            (indexed && dp__index_reserve(&g->dp__names, cnt)) ||
            (src_len && !(sources = (char *)DP_MALLOC(src_len))) || !(copy = dp__pool_name(g, name, name_len))) {
            DP_FREE(sources);
            return dp__fail(err, DP_ERR_NOMEM, "out of memory adding op '%s' (op %d)", name, n);
        }
    }
    for (k = 0, src_len = 0; k < op->n_source; k++) {
        size_t l = strlen(op->source[k]) + 1;
        memcpy(sources + src_len, op->source[k], l);
        src_len += l;
    }
    if (n == 0 && op->n_dev_time > 0) g->n_dev_time = op->n_dev_time;
    DP__PUT(g->name, copy);
    DP__PUT_Z(g->source, sources, !sources);
    DP__PUT_Z(g->n_source, op->n_source, !op->n_source);
    DP__PUT_Z(g->kind, op->kind, !op->kind);
    DP__PUT_Z(g->compute, op->compute, dp__zero_bits(op->compute));
    DP__PUT_Z(g->out_bytes, op->out_bytes, dp__zero_bits(op->out_bytes));
    DP__PUT_Z(g->mem_bytes, op->mem_bytes, dp__zero_bits(op->mem_bytes));
    DP__PUT_Z(g->resident, op->resident, dp__zero_bits(op->resident));
    DP__PUT_Z(g->rows, op->rows, !op->rows);
    DP__PUT_Z(g->cols, op->cols, !op->cols);
    DP__PUT_Z(g->arg, op->arg, !op->arg);
    for (k = 0; k < g->n_dev_time; k++) DP__PUT(g->dev_time, op->dev_time[k]);
    if (indexed) dp__index_put((dp__index *)g->dp__names, h, n);
    g->n_ops = n + 1;
    if (id) *id = n;
    return 0;
}

DPDEF int dp_graph_add_op(dp_graph *g, const dp_op_desc *op, int *id, dp_error *err)
{
    return dp__op_add(g, op, id, 1, err);
}

/* dp_graph_add_op for the readers: every check but the one for a
   duplicate name, and the name not indexed. A probe into the name index
   per op goes to a random place of a table as large as the ops (for a
   large graph, a miss of every cache); dp__index_ops indexes them all at
   once, in the table's order, and finds the first duplicate. */
static int dp__graph_push_op(dp_graph *g, const dp_op_desc *op, int *id, dp_error *err)
{
    return dp__op_add(g, op, id, 0, err);
}

/* An op of a name (len bytes, NUL-terminated), kind, compute cost and
   output, workspace and resident bytes, every other field zero, appended
   into room reserved for it (dp__graph_reserve), its name not indexed:
   the op dp__graph_push_op makes, for a caller that knows it passes that
   function's checks (a valid name, costs finite and not negative, a graph
   not finalised, without per-device times, of fewer than DP_MAX_OPS ops),
   without them and their cost per op. 0, or -1 when out of memory. */
static int dp__graph_put_op(dp_graph *g, const char *name, size_t len, dp_kind kind, double compute, double out_bytes,
                            double mem, double resident)
{
    char *copy = dp__pool_name(g, name, len);
    if (!copy) return -1;
    DP__PUT(g->name, copy);
    DP__PUT_Z(g->kind, kind, !kind);
    DP__PUT_Z(g->compute, compute, dp__zero_bits(compute));
    DP__PUT_Z(g->out_bytes, out_bytes, dp__zero_bits(out_bytes));
    DP__PUT_Z(g->mem_bytes, mem, dp__zero_bits(mem));
    DP__PUT_Z(g->resident, resident, dp__zero_bits(resident));
    DP__PUT_Z(g->rows, 0, 1);
    DP__PUT_Z(g->cols, 0, 1);
    DP__PUT_Z(g->arg, 0, 1);
    DP__PUT_Z(g->source, NULL, 1);
    DP__PUT_Z(g->n_source, 0, 1);
    g->n_ops++;
    return 0;
}

/* The name "<prefix><n + 1>" from "<prefix><n>" (len bytes, the prefix
   plen of them), in place: the new length. */
static size_t dp__num_name_next(char *name, size_t plen, size_t len)
{
    size_t i = len;
    while (i > plen && name[i - 1] == '9') name[--i] = '0';
    if (i > plen) { name[i - 1]++; return len; }
    name[plen] = '1';   /* 9..9 + 1: 10..0 */
    name[len] = '0';
    name[len + 1] = 0;
    return len + 1;
}

/* count zero elements appended to the growable array a (room reserved):
   into zeroed room only counted, as DP__PUT_Z counts them. */
static void dp__put_zeros(void *a, size_t elem, size_t count)
{
    dp__arr *h = DP__HDR(a);
    if (!h->zero) {
        memset((char *)a + h->len * elem, 0, count * elem);
        h->wrote += count;
    }
    h->len += count;
}

/* Makes ops n_ops .. n_ops + count - 1 of g, whose kinds, compute costs
   and output bytes a reader has put (DP__PUT_Z, into room reserved by
   dp__graph_reserve): each named "op<i>", every other field zero. These
   are ops as dp__graph_push_op makes them from a name, kind, compute cost
   and output bytes that pass its checks (the DOPPLER format's: integers
   below 2^53), without the checks and their cost per op. 0, or -1 when
   out of memory. */
static int dp__graph_plain_ops(dp_graph *g, int count)
{
    char name[32];
    size_t len = dp__num_name(name, "op", g->n_ops);
    int i;
    for (i = 0; i < count; i++, len = dp__num_name_next(name, 2, len)) {
        char *copy = dp__pool_name(g, name, len);
        if (!copy) return -1;
        DP__PUT(g->name, copy);
    }
    dp__put_zeros(g->mem_bytes, sizeof *g->mem_bytes, (size_t)count);
    dp__put_zeros(g->resident, sizeof *g->resident, (size_t)count);
    dp__put_zeros(g->rows, sizeof *g->rows, (size_t)count);
    dp__put_zeros(g->cols, sizeof *g->cols, (size_t)count);
    dp__put_zeros(g->arg, sizeof *g->arg, (size_t)count);
    dp__put_zeros(g->source, sizeof *g->source, (size_t)count);
    dp__put_zeros(g->n_source, sizeof *g->n_source, (size_t)count);
    g->n_ops += count;
    return 0;
}

/* Indexes the names of the ops (g's name index not made yet: they were
   added by dp__graph_push_op): 0, DP_ERR_NOMEM, or DP_ERR_GRAPH when two
   share a name, *dup then the first op (the lowest index) whose name an
   earlier op has and *first that earlier op, and no index made. The ops
   go into the table in the order of their home slots (a counting sort by
   its top bits), so that its pages are filled one after the other; each
   name is hashed twice (to count, to place) rather than its entry kept
   between the two, which would be as many more bytes of fresh memory
   touched as the sorted entries. */
static uint64_t dp__index_entry(const dp_graph *g, size_t i)   /* op i's slot entry (see dp__index_put) */
{
    return (dp__hash_mem(g->name[i], (unsigned char)g->name[i][-1]) & 0xffffffff00000000ULL) | (uint32_t)(i + 1);
}

static int dp__index_ops(dp_graph *g, int *dup, int *first, dp_error *err)
{
    size_t n = (size_t)g->n_ops, cap = 16, i, nb = 1, shift = 4;
    uint64_t *sorted = NULL, e;
    size_t *cnt = NULL;
    dp__index *ix;
    int rc = 0;
    *dup = *first = -1;
    while (cap < 2 * n) { cap *= 2; shift++; }
    while (nb < 4096 && nb < cap) { nb *= 2; shift--; }   /* nb runs of cap / nb slots */
    ix = (dp__index *)dp__zalloc(sizeof *ix + cap * sizeof(uint64_t));   /* a large one: fresh zero pages, untouched */
    sorted = (uint64_t *)DP_MALLOC(sizeof *sorted * (n + 1));
    cnt = (size_t *)DP_MALLOC(sizeof *cnt * (nb + 1));
    if (!ix || !sorted || !cnt) { rc = dp__fail(err, DP_ERR_NOMEM, "out of memory indexing %zu op names", n); goto done; }
    ix->cap = cap; ix->slot = (uint64_t *)(ix + 1);
    memset(cnt, 0, sizeof *cnt * (nb + 1));
    for (i = 0; i < n; i++) {   /* each name hashed once, kept in the table's room until sorted */
        ix->slot[i] = e = dp__index_entry(g, i);
        cnt[(((e >> 32) & (cap - 1)) >> shift) + 1]++;
    }
    for (i = 0; i < nb; i++) cnt[i + 1] += cnt[i];
    for (i = 0; i < n; i++) {   /* stable: ids ascend */
        e = ix->slot[i];
        sorted[cnt[((e >> 32) & (cap - 1)) >> shift]++] = e;
    }
    memset(ix->slot, 0, n * sizeof(uint64_t));   /* the rest is as it came, zero */
    for (i = 0; i < n; i++) {
        uint64_t x = sorted[i];
        int v = (int)(uint32_t)x - 1;
        size_t k = (size_t)(x >> 32) & (cap - 1);
        for (; ix->slot[k]; k = (k + 1) & (cap - 1))
            if ((ix->slot[k] >> 32) == (x >> 32) && strcmp(g->name[(uint32_t)ix->slot[k] - 1], g->name[v]) == 0) break;
        if (!ix->slot[k]) { ix->slot[k] = x; continue; }
        if (*dup < 0 || v < *dup) { *dup = v; *first = (int)(uint32_t)ix->slot[k] - 1; }   /* one name's ops come in id order */
    }
    if (*dup >= 0) rc = DP_ERR_GRAPH;
    else { g->dp__names = ix; ix = NULL; }
done:
    DP_FREE(ix); DP_FREE(sorted); DP_FREE(cnt);
    return rc;
}

/* Every check of dp_graph_add_edge but the one for a duplicate. */
static int dp__edge_check(const dp_graph *g, int src, int dst, double bytes, dp_error *err)
{
    if (g->finalized) return dp__fail(err, DP_ERR_ARG, "graph already finalised; cannot add edge");
    if (g->n_edges >= DP_MAX_EDGES) return dp__fail(err, DP_ERR_LIMIT, "more than %d edges (the limit DP_MAX_EDGES)", DP_MAX_EDGES);
    if (src < 0 || src >= g->n_ops) return dp__fail(err, DP_ERR_GRAPH, "edge source %d is not an op (0..%d)", src, g->n_ops - 1);
    if (dst < 0 || dst >= g->n_ops) return dp__fail(err, DP_ERR_GRAPH, "edge target %d is not an op (0..%d)", dst, g->n_ops - 1);
    if (src == dst) return dp__fail(err, DP_ERR_GRAPH, "self loop on op '%s'", g->name[src]);
    if (bytes != bytes || bytes == HUGE_VAL) return dp__fail(err, DP_ERR_RANGE, "edge %s -> %s: bytes '%g' is not finite", g->name[src], g->name[dst], bytes);
    if (bytes < 0) return dp__fail(err, DP_ERR_RANGE, "edge %s -> %s: bytes '%.10g' is negative", g->name[src], g->name[dst], bytes);
    return 0;
}

/* Appends a checked edge; with h (its hash), indexed among the edges. */
static int dp__edge_put(dp_graph *g, int src, int dst, double bytes, const uint64_t *h, dp_error *err)
{
    size_t cnt = (size_t)g->n_edges + 1;
    if (DP__GROW(g->src, cnt) || DP__GROW(g->dst, cnt) || DP__GROW(g->bytes, cnt) ||
        (h && dp__index_reserve(&g->dp__edges, cnt)))
        return dp__fail(err, DP_ERR_NOMEM, "out of memory adding edge %s -> %s (edge %d)", g->name[src], g->name[dst], g->n_edges);
    DP__PUT(g->src, src);
    DP__PUT(g->dst, dst);
    DP__PUT_Z(g->bytes, bytes, dp__zero_bits(bytes));
    if (h) dp__index_put((dp__index *)g->dp__edges, *h, g->n_edges);
    g->n_edges++;
    return 0;
}

DPDEF int dp_graph_add_edge(dp_graph *g, int src, int dst, double bytes, dp_error *err)
{
    uint64_t h;
    int rc;
    if ((rc = dp__edge_check(g, src, dst, bytes, err))) return rc;
    h = dp__hash_edge(src, dst);
    if (dp__index_find_edge(g, src, dst, h) >= 0) return dp__fail(err, DP_ERR_GRAPH, "duplicate edge %s -> %s", g->name[src], g->name[dst]);
    return dp__edge_put(g, src, dst, bytes, &h, err);
}

/* dp_graph_add_edge for the readers: every check but the one for a
   duplicate, which needs a set of every edge (a hash table as large as
   the edges, touched at random for each). A reader's graph may hold
   duplicates until dp__finalize finds the first in one pass over the
   adjacency it builds anyway (see dp__read_finish). */
static int dp__graph_push_edge(dp_graph *g, int src, int dst, double bytes, dp_error *err)
{
    int rc = dp__edge_check(g, src, dst, bytes, err);
    return rc ? rc : dp__edge_put(g, src, dst, bytes, NULL, err);
}

/* Room for ops more ops and edges more edges (a reader that knows how
   many it will add): no array grows as they are added (the name index is
   made at once by dp__index_ops). 0, or -1 when out of memory. */
static int dp__graph_reserve(dp_graph *g, size_t ops, size_t edges)
{
    size_t no = (size_t)g->n_ops + ops, ne = (size_t)g->n_edges + edges;
    if (ops && (DP__GROW(g->name, no) || DP__GROW(g->kind, no) || DP__GROW(g->compute, no) ||
                DP__GROW(g->out_bytes, no) || DP__GROW(g->mem_bytes, no) || DP__GROW(g->resident, no) ||
                DP__GROW(g->rows, no) || DP__GROW(g->cols, no) || DP__GROW(g->arg, no) ||
                DP__GROW(g->source, no) || DP__GROW(g->n_source, no)))
        return -1;
    if (edges && (DP__GROW(g->src, ne) || DP__GROW(g->dst, ne) || DP__GROW(g->bytes, ne))) return -1;
    return 0;
}

DPDEF int dp_graph_find_weight(const dp_graph *g, const char *name)
{
    return name ? dp__index_find_str(g->dp__wnames, g->weight_name, name, dp__hash_str(name)) : -1;
}

DPDEF int dp_graph_add_weight(dp_graph *g, const char *name, double bytes, int *id, dp_error *err)
{
    char *copy = NULL;
    int n = g->n_weights, k;
    uint64_t h;
    if (g->finalized) return dp__fail(err, DP_ERR_ARG, "graph already finalised; cannot add weight");
    if (n >= DP_MAX_OPS) return dp__fail(err, DP_ERR_LIMIT, "more than %d weights (the limit DP_MAX_OPS)", DP_MAX_OPS);
    if (!name || !dp__valid_name(name))
        return dp__fail(err, DP_ERR_PARSE, "weight name '%.*s' is empty, longer than %d bytes or holds a space, '#', '=' or ','",
                        DP_MAX_NAME + 8, name ? name : "", DP_MAX_NAME);
    if (bytes != bytes || bytes == HUGE_VAL || bytes == -HUGE_VAL)
        return dp__fail(err, DP_ERR_RANGE, "weight '%s': bytes '%g' is not finite", name, bytes);
    if (bytes < 0) return dp__fail(err, DP_ERR_RANGE, "weight '%s': bytes '%.10g' is negative", name, bytes);
    h = dp__hash_str(name);
    if ((k = dp__index_find_str(g->dp__wnames, g->weight_name, name, h)) >= 0)
        return dp__fail(err, DP_ERR_GRAPH, "duplicate weight name '%s' (first defined as weight %d)", name, k);
    if (DP__GROW(g->weight_name, (size_t)n + 1) || DP__GROW(g->weight_bytes, (size_t)n + 1) ||
        dp__index_reserve(&g->dp__wnames, (size_t)n + 1) || !(copy = dp__strdup(name)))
        return dp__fail(err, DP_ERR_NOMEM, "out of memory adding weight '%s' (weight %d)", name, n);
    DP__PUT(g->weight_name, copy);
    DP__PUT(g->weight_bytes, bytes);
    dp__index_put((dp__index *)g->dp__wnames, h, n);
    g->n_weights = n + 1;
    if (id) *id = n;
    return 0;
}

DPDEF int dp_graph_use_weight(dp_graph *g, int op, int weight, dp_error *err)
{
    if (g->finalized) return dp__fail(err, DP_ERR_ARG, "graph already finalised; cannot add a weight's use");
    if (op < 0 || op >= g->n_ops) return dp__fail(err, DP_ERR_GRAPH, "weight use: op %d is not an op (0..%d)", op, g->n_ops - 1);
    if (weight < 0 || weight >= g->n_weights)
        return dp__fail(err, DP_ERR_GRAPH, "op '%s': weight %d is not a weight (0..%d)", g->name[op], weight, g->n_weights - 1);
    if (g->n_uses >= DP_MAX_EDGES) return dp__fail(err, DP_ERR_LIMIT, "more than %d weight uses (the limit DP_MAX_EDGES)", DP_MAX_EDGES);
    if (DP__GROW(g->use_op, (size_t)g->n_uses + 1) || DP__GROW(g->use_weight, (size_t)g->n_uses + 1))
        return dp__fail(err, DP_ERR_NOMEM, "out of memory adding op '%s''s use of weight '%s'", g->name[op], g->weight_name[weight]);
    DP__PUT(g->use_op, op);
    DP__PUT(g->use_weight, weight);
    g->n_uses++;
    return 0;
}

/* Counting sort of edges by key[] into off[n+1] and idx[m]; edges already
   in key order (a file that lists them by op) are 0, 1, ..., m - 1. */
static void dp__csr(int n, int m, const int *key, int *off, int *idx)
{
    int i, sorted = 1;
    memset(off, 0, sizeof(int) * (size_t)(n + 1));
    for (i = 0; i < m; i++) {
        off[key[i] + 1]++;
        sorted &= i == 0 || key[i - 1] <= key[i];
    }
    for (i = 0; i < n; i++) off[i + 1] += off[i];
    if (sorted) {
        for (i = 0; i < m; i++) idx[i] = i;
        return;
    }
    for (i = 0; i < m; i++) idx[off[key[i]]++] = i;
    for (i = n; i > 0; i--) off[i] = off[i - 1];
    off[0] = 0;
}

/* Heap of ops: largest key first, ties (and a NULL key) lower index first.
   Used for the topological order, the list schedulers and enumopt. */
typedef struct dp__opheap { int *h; int n; const double *key; } dp__opheap;

static int dp__oh_before(const dp__opheap *q, int a, int b)
{
    if (q->key && q->key[a] != q->key[b]) return q->key[a] > q->key[b];
    return a < b;
}

static void dp__oh_push(dp__opheap *q, int v) { DP__HEAP_PUSH(int, q->h, q->n, v, dp__oh_before, q); }
static int dp__oh_pop(dp__opheap *q) { int v; DP__HEAP_POP(int, q->h, q->n, v, dp__oh_before, q); return v; }

/* Names one op on a cycle among ops left with indeg > 0. */
static int dp__find_cycle_op(const dp_graph *g, const int *indeg)
{
    /* Walk predecessors that are still blocked: in a finite set, every such
       walk enters a cycle; the op visited twice lies on it. */
    int v = -1, i, steps;
    for (i = 0; i < g->n_ops; i++) if (indeg[i] > 0) { v = i; break; }
    if (v < 0) return -1;
    for (steps = 0; steps < g->n_ops; steps++) {
        int k, next = -1;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int u = g->src[g->in_edge[k]];
            if (indeg[u] > 0) { next = u; break; }
        }
        if (next < 0) break;
        v = next;
    }
    return v; /* after n steps the walk is on the cycle */
}

/* ---- sums that must stay finite ---------------------------------------
   Every cost is finite on its own, but sums of costs near the largest
   double overflow: a graph whose total compute is 1e308 + 1e308 would
   place "successfully" with a makespan of inf. These checks refuse such a
   graph (or graph and cluster) with DP_ERR_RANGE, naming the op (or edge)
   at which a sum first stops being finite. */

/* Unit-free totals, ops and edges in index order: compute, output and
   workspace bytes, edge bytes (what dp_graph_stats and the memory
   accounting add up). fresh: g comes from a reader (see dp__zeros), and
   an array of zeros is left out of its sum (x + 0 is x: the same sums). */
static int dp__check_totals(const dp_graph *g, int fresh, dp_error *err)
{
    double comp = 0, mem = 0, bytes = 0, t;
    int v, e, out = !(fresh && dp__zeros(g->out_bytes)), wk = !(fresh && dp__zeros(g->mem_bytes)), res = !(fresh && dp__zeros(g->resident)),
        eb = !(fresh && dp__zeros(g->bytes));
    for (v = 0; v < g->n_ops; v++) {
        t = comp + g->compute[v];
        if (!(t < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "op '%s' (node %d): the total compute of the ops up to it, %g + %g, is not finite",
                            g->name[v], v, comp, g->compute[v]);
        comp = t;
        t = mem;
        if (out) t += g->out_bytes[v];
        if (wk) t += g->mem_bytes[v];
        if (res) t += g->resident[v];
        if (!(t < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "op '%s' (node %d): the total output, workspace and resident bytes of the ops up to it, %g + %g + %g + %g, is not finite",
                            g->name[v], v, mem, g->out_bytes[v], g->mem_bytes[v], g->resident[v]);
        mem = t;
    }
    for (v = 0; v < g->n_uses; v++) {   /* a weight held on every device: at most once per use */
        t = mem + g->weight_bytes[g->use_weight[v]];
        if (!(t < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "weight '%s' (used by op '%s'): the total bytes with the weights up to it, %g + %g, is not finite",
                            g->weight_name[g->use_weight[v]], g->name[g->use_op[v]], mem, g->weight_bytes[g->use_weight[v]]);
        mem = t;
    }
    for (e = 0; eb && e < g->n_edges; e++) {
        t = bytes + g->bytes[e];
        if (!(t < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "edge %s -> %s (edge %d): the total bytes of the edges up to it, %g + %g, is not finite",
                            g->name[g->src[e]], g->name[g->dst[e]], e, bytes, g->bytes[e]);
        bytes = t;
    }
    return 0;
}

/* Times: every op on its slowest device one after another, then every
   edge as a transfer on the slowest link, must add up to a finite number.
   That sum bounds every finish time of every placement (a work-conserving
   run always has an op or a transfer under way until it ends), and so the
   critical path, the lower bound, b- and t-levels. On cluster c, or with
   c NULL in the graph's own units (the cluster dp_cluster_for_graph makes:
   speed unit_speed, bandwidth unit_bandwidth, no latency). */
static int dp__check_times(const dp_graph *g, const dp_cluster *c, int fresh, dp_error *err)
{
    double total = 0, lat = 0, bw = c ? HUGE_VAL : g->unit_bandwidth, t;
    int v, e, d, nd, worst;
    if (c && c->n > 1)
        for (d = 0; d < c->n * c->n; d++) {
            if (d / c->n == d % c->n) continue;
            if (c->latency[d] > lat) lat = c->latency[d];
            if (c->bandwidth[d] < bw) bw = c->bandwidth[d];
        }
    if (!c && !(1.0 / bw < HUGE_VAL))   /* dp_check asks the same of every link */
        return dp__fail(err, DP_ERR_RANGE, "units bandwidth %g is too small (its inverse, the time per byte, is not finite)", bw);
    nd = c ? c->n : g->n_dev_time > 0 ? g->n_dev_time : 1;
    for (v = 0; v < g->n_ops; v++) {
        double tmax = 0;
        worst = 0;
        if (!c && !g->n_dev_time) {   /* one time an op, in the graph's units */
            double x = g->compute[v] / g->unit_speed;
            if (!(x <= 0)) tmax = x;
        } else for (d = 0; d < nd; d++) {
            double x = c ? dp_op_time(g, c, v, d) : -1;
            if (!c && g->n_dev_time > 0) x = g->dev_time[(size_t)v * g->n_dev_time + d];
            if (!c && x < 0) x = g->compute[v] / g->unit_speed;
            if (!(x <= tmax)) { tmax = x; worst = d; }
        }
        if (!(tmax < HUGE_VAL))
            return c ? dp__fail(err, DP_ERR_RANGE, "op '%s' (node %d): its time on device %d (compute %g at speed %g) is not finite",
                                g->name[v], v, worst, g->compute[v], c->speed[worst])
                     : dp__fail(err, DP_ERR_RANGE, "op '%s' (node %d): its time in the graph's units (compute %g at speed %g) is not finite",
                                g->name[v], v, g->compute[v], g->unit_speed);
        t = total + tmax;
        if (!(t < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "op '%s' (node %d): the times of the ops up to it, each on its slowest device, add up past the largest number (%g + %g): finish times could be infinite",
                            g->name[v], v, total, tmax);
        total = t;
    }
    if (nd < 2 && c) return 0;   /* one device: no transfers */
    if (!c && fresh && dp__zeros(g->bytes)) return 0;   /* every transfer takes 0 (see dp__check_totals) */
    for (e = 0; e < g->n_edges; e++) {
        double x = g->bytes[e] > 0 ? lat + g->bytes[e] / bw : lat;
        t = total + x;
        if (!(t < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "edge %s -> %s (edge %d): %s",
                            g->name[g->src[e]], g->name[g->dst[e]], e,
                            x < HUGE_VAL ? "the times of every op and of the transfers up to it add up past the largest number: finish times could be infinite"
                                         : "a transfer of its bytes on the slowest link takes a time that is not finite");
        total = t;
    }
    return 0;
}

/* The first edge (the lowest index) that repeats an earlier edge's source
   and target, or -1: over the edges by source (out_off, out_edge: each
   source's edges in edge order), with mark[n_ops] as scratch. */
static int dp__dup_edge(const dp_graph *g, const int *out_off, const int *out_edge, int *mark)
{
    int i, k, first = -1, by_src = 1, by_dst = 1;
    for (i = 1; i < g->n_edges && (by_src || by_dst); i++) {   /* pairs strictly in order: none repeats */
        by_src &= g->src[i - 1] < g->src[i] || (g->src[i - 1] == g->src[i] && g->dst[i - 1] < g->dst[i]);
        by_dst &= g->dst[i - 1] < g->dst[i] || (g->dst[i - 1] == g->dst[i] && g->src[i - 1] < g->src[i]);
    }
    if (by_src || by_dst) return -1;
    for (i = 0; i < g->n_ops; i++) mark[i] = -1;
    for (i = 0; i < g->n_ops; i++)
        for (k = out_off[i]; k < out_off[i + 1]; k++) {
            int e = out_edge[k], d = g->dst[e];
            if (mark[d] == i && (first < 0 || e < first)) first = e;
            mark[d] = i;
        }
    return first;
}

/* dp__dup_edge before the adjacency is built (a reader's error path):
   the first duplicate edge, or -1 (also when out of memory: no answer). */
static int dp__first_dup_edge(const dp_graph *g)
{
    int n = g->n_ops, m = g->n_edges, e = -1;
    int *off, *idx, *mark;
    if (n < 1 || m < 2) return -1;
    off = (int *)DP_MALLOC(sizeof(int) * ((size_t)n + 1));
    idx = (int *)DP_MALLOC(sizeof(int) * (size_t)m);
    mark = (int *)DP_MALLOC(sizeof(int) * (size_t)n);
    if (off && idx && mark) {
        dp__csr(n, m, g->src, off, idx);
        e = dp__dup_edge(g, off, idx, mark);
    }
    DP_FREE(off); DP_FREE(idx); DP_FREE(mark);
    return e;
}

/* dp_graph_finalize. With dup (a reader's graph, built with
   dp__graph_push_edge): *dup is the first duplicate edge when that is the
   error (DP_ERR_GRAPH), else -1; such a graph failing an earlier check (a
   sum that is not finite) while holding a duplicate fails with the
   duplicate, the error its reader would have found first; its checks of
   the sums leave out its arrays of zeros (dp__zeros). */
static int dp__finalize(dp_graph *g, int *dup, dp_error *err)
{
    int n = g->n_ops, m = g->n_edges, i, k, cnt = 0, rc, e;
    int *indeg = NULL, *heap = NULL;
    dp__opheap q;
    if (dup) *dup = -1;
    if (g->finalized) return 0;
    if (n == 0) return dp__fail(err, DP_ERR_GRAPH, "graph has no ops");
    if ((rc = dp__check_totals(g, dup != NULL, err)) || (rc = dp__check_times(g, NULL, dup != NULL, err))) {
        if (dup && (e = dp__first_dup_edge(g)) >= 0) {
            *dup = e;
            rc = dp__fail(err, DP_ERR_GRAPH, "duplicate edge %s -> %s", g->name[g->src[e]], g->name[g->dst[e]]);
        }
        return rc;
    }
    g->out_off = (int *)dp__alloc((size_t)n + 1, sizeof(int), err, "adjacency");
    g->in_off = (int *)dp__alloc((size_t)n + 1, sizeof(int), err, "adjacency");
    g->out_edge = (int *)dp__alloc((size_t)m, sizeof(int), err, "adjacency");
    g->in_edge = (int *)dp__alloc((size_t)m, sizeof(int), err, "adjacency");
    g->topo = (int *)dp__alloc((size_t)n, sizeof(int), err, "topological order");
    indeg = (int *)dp__alloc((size_t)n, sizeof(int), err, "topological order");
    if (!g->out_off || !g->in_off || !g->out_edge || !g->in_edge || !g->topo || !indeg) goto nomem;
    dp__csr(n, m, g->src, g->out_off, g->out_edge);
    dp__csr(n, m, g->dst, g->in_off, g->in_edge);
    /* duplicate edges (indeg as the marks) */
    if ((e = dp__dup_edge(g, g->out_off, g->out_edge, indeg)) >= 0) {
        if (dup) *dup = e;
        rc = dp__fail(err, DP_ERR_GRAPH, "duplicate edge %s -> %s", g->name[g->src[e]], g->name[g->dst[e]]);
        goto fail;
    }
    /* weights: uses by op and by weight; an op uses a weight once */
    if (g->n_uses > 0 || g->n_weights > 0) {
        int W = g->n_weights, U = g->n_uses;
        g->wuse_off = (int *)dp__alloc((size_t)n + 1, sizeof(int), err, "weight uses");
        g->wuse = (int *)dp__alloc((size_t)U + 1, sizeof(int), err, "weight uses");
        g->wop_off = (int *)dp__alloc((size_t)W + 1, sizeof(int), err, "weight uses");
        g->wop = (int *)dp__alloc((size_t)U + 1, sizeof(int), err, "weight uses");
        if (!g->wuse_off || !g->wuse || !g->wop_off || !g->wop) goto nomem;
        dp__csr(n, U, g->use_op, g->wuse_off, g->wuse);
        for (k = 0; k < U; k++) g->wuse[k] = g->use_weight[g->wuse[k]];
        dp__csr(W, U, g->use_weight, g->wop_off, g->wop);
        for (k = 0; k < U; k++) g->wop[k] = g->use_op[g->wop[k]];
        for (i = 0; i < n; i++) indeg[i] = -1;
        for (i = 0; i < W; i++)
            for (k = g->wop_off[i]; k < g->wop_off[i + 1]; k++) {
                if (indeg[g->wop[k]] == i) {
                    rc = dp__fail(err, DP_ERR_GRAPH, "op '%s' uses weight '%s' twice", g->name[g->wop[k]], g->weight_name[i]);
                    goto fail;
                }
                indeg[g->wop[k]] = i;
            }
    }
    /* The topological order taking the lowest ready index first (Kahn's
       algorithm on a heap): the lexicographically smallest, whatever the
       edge order. When every edge goes from a lower index to a higher one
       (a file that lists its ops in a topological order), that is 0, 1,
       ..., n - 1 (op k is ready once 0..k-1 are taken), and no cycle. */
    for (e = 0; e < m && g->src[e] < g->dst[e]; e++) {}
    if (e == m) {
        for (i = 0; i < n; i++) g->topo[i] = i;
        cnt = n;
    } else {
        if (!(heap = (int *)dp__alloc((size_t)n, sizeof(int), err, "topological order"))) goto nomem;
        for (i = 0; i < n; i++) indeg[i] = g->in_off[i + 1] - g->in_off[i];
        q.h = heap; q.n = 0; q.key = NULL;
        for (i = 0; i < n; i++) if (indeg[i] == 0) dp__oh_push(&q, i);
        while (q.n > 0) {
            int v = dp__oh_pop(&q);
            g->topo[cnt++] = v;
            for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
                int d = g->dst[g->out_edge[k]];
                if (--indeg[d] == 0) dp__oh_push(&q, d);
            }
        }
    }
    if (cnt < n) {
        int v = dp__find_cycle_op(g, indeg);
        rc = dp__fail(err, DP_ERR_CYCLE, "cycle through op '%s' (%d ops on or behind cycles)", g->name[v], n - cnt);
        goto fail;
    }
    DP_FREE(indeg); DP_FREE(heap);
    dp__free_edge_set(g);   /* only needed while edges are added */
    g->finalized = 1;
    return 0;
nomem:
    rc = DP_ERR_NOMEM;   /* dp__alloc left the message */
fail:
    DP_FREE(indeg); DP_FREE(heap);
    DP_FREE(g->out_off); DP_FREE(g->in_off); DP_FREE(g->out_edge); DP_FREE(g->in_edge); DP_FREE(g->topo);
    DP_FREE(g->wuse_off); DP_FREE(g->wuse); DP_FREE(g->wop_off); DP_FREE(g->wop);
    g->out_off = g->in_off = g->out_edge = g->in_edge = g->topo = NULL;
    g->wuse_off = g->wuse = g->wop_off = g->wop = NULL;
    return rc;
}

DPDEF int dp_graph_finalize(dp_graph *g, dp_error *err) { return dp__finalize(g, NULL, err); }

DPDEF int dp_graph_copy(dp_graph *dst, const dp_graph *src, dp_error *err)
{
    int i, k, rc, most = 0;
    const char **names = NULL;   /* one op's source names */
    dp_graph_init(dst);
    for (i = 0; i < src->n_ops; i++) if (src->n_source[i] > most) most = src->n_source[i];
    if (most && !(names = (const char **)dp__alloc((size_t)most, sizeof *names, err, "graph copy"))) return DP_ERR_NOMEM;
    for (i = 0; i < src->n_ops; i++) {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        for (k = 0; k < src->n_source[i]; k++) names[k] = k ? names[k - 1] + strlen(names[k - 1]) + 1 : src->source[i];
        d.source = names; d.n_source = src->n_source[i];
        d.name = src->name[i]; d.kind = src->kind[i]; d.compute = src->compute[i];
        d.out_bytes = src->out_bytes[i]; d.mem_bytes = src->mem_bytes[i]; d.resident = src->resident[i];
        d.rows = src->rows[i]; d.cols = src->cols[i]; d.arg = src->arg[i];
        d.n_dev_time = src->n_dev_time;
        d.dev_time = src->n_dev_time ? src->dev_time + (size_t)i * src->n_dev_time : NULL;
        if ((rc = dp_graph_add_op(dst, &d, NULL, err))) goto fail;
    }
    for (i = 0; i < src->n_edges; i++)
        if ((rc = dp_graph_add_edge(dst, src->src[i], src->dst[i], src->bytes[i], err))) goto fail;
    for (i = 0; i < src->n_weights; i++)
        if ((rc = dp_graph_add_weight(dst, src->weight_name[i], src->weight_bytes[i], NULL, err))) goto fail;
    for (i = 0; i < src->n_uses; i++)
        if ((rc = dp_graph_use_weight(dst, src->use_op[i], src->use_weight[i], err))) goto fail;
    dst->unit_speed = src->unit_speed; dst->unit_bandwidth = src->unit_bandwidth;
    dst->n_ext_inputs = src->n_ext_inputs; dst->format = src->format;
    if ((rc = dp_graph_finalize(dst, err))) goto fail;
    DP_FREE(names);
    return 0;
fail:
    DP_FREE(names);
    dp_graph_free(dst);
    return rc;
}

/* ======================================================================
   >>formats
   The readers of graphs, at the speed of the disk (hundreds of MB/s on
   one core for the text formats), with every check a reader had before:
   - a file is mapped, not copied (dp__input_open), checked once for bytes
     no text holds (dp__binary_at, eight bytes at a time);
   - lines are read where they stand (dp__text_view); the native reader
     splits a line and finds its fields in one pass (dp__native_split),
     the DOPPLER reader reads its lists of integers off the text in one
     pass over the digits (dp__list); numbers go through a fast path
     that gives strtod's value bit for bit (dp__num_fast);
   - an edge line of the usual form ("edge a b") is read straight from the
     text, its ops found first among the ops of the edge before
     (dp__native_edge_line, dp__native_find); any other line, and every
     line with a fault, is read the general way, which says what it is;
   - arrays are sized at once from a native file's counts line (never past
     what the rest of the file can hold), and the name index is made once
     for the ops read (dp__index_ops), not op by op, where each insertion
     is a miss of every cache for a large graph; a DOPPLER file's ops,
     op0, op1, ..., need none: a name is found by its number (dp__numbered);
   - so a reader's ops may repeat a name and its edges an edge until
     dp__read_finish finds the first of each (the edges over the adjacency
     dp__finalize builds anyway) and tells it at its line, before any
     error met after it: the same message, for the same file, as when it
     was found as it was read;
   - the topological order of a file whose edges all go from an op to a
     later one (most files) is read off, without a heap (dp__finalize).
   The binary format (>>api-formats) needs none of this: its counts are
   known up front and its values are read in place, after its checksums.
   ====================================================================== */
static const char *const dp__format_names[] = { "auto", "native", "doppler", "stg", "binary" };

DPDEF const char *dp_format_name(dp_format fmt) { return dp__name_of(dp__format_names, DP_FORMAT_BINARY + 1, (int)fmt); }

DPDEF int dp_format_parse(const char *name, dp_format *out)
{
    int i = dp__name_index(dp__format_names, DP_FORMAT_BINARY + 1, name);
    if (i >= 0) *out = (dp_format)i;
    return i < 0 ? -1 : 0;
}

DPDEF dp_format dp_format_from_path(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot) return DP_FORMAT_NATIVE;
    if (strcmp(dot, ".stg") == 0) return DP_FORMAT_STG;
    if (strcmp(dot, ".txt") == 0 || strcmp(dot, ".doppler") == 0) return DP_FORMAT_DOPPLER;
    if (strcmp(dot, ".dpb") == 0) return DP_FORMAT_BINARY;
    return DP_FORMAT_NATIVE;
}

DPDEF dp_format dp_format_detect(const char *buf, size_t len)
{
    /* binary: its magic. native: first token "doppler-graph". DOPPLER and
       STG both open with a lone integer; DOPPLER's next lines are
       comma-separated lists. */
    const char *p, *end;
    int line = 0, first_is_int = 0, commas = 0, seen = 0;
    if (dp__is_dpb(buf, len)) return DP_FORMAT_BINARY;
    dp__skip_bom(&buf, &len);
    p = buf; end = buf + len;
    while (p < end && line < 6) {
        const char *e = (const char *)memchr(p, '\n', (size_t)(end - p)), *q = p;
        if (!e) e = end;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q < e && *q != '#') {
            if (!seen) {
                const char *r = q;
                if ((size_t)(e - q) >= 13 && strncmp(q, "doppler-graph", 13) == 0) return DP_FORMAT_NATIVE;
                while (r < e && *r >= '0' && *r <= '9') r++;
                while (r < e && (*r == ' ' || *r == '\t' || *r == '\r' || *r == ',')) r++;
                first_is_int = r > q && r == e;
                if (!first_is_int) return DP_FORMAT_AUTO;
                seen = 1;
            } else {
                commas += memchr(q, ',', (size_t)(e - q)) != NULL;
                line++;
            }
        }
        p = e + 1;
    }
    if (!first_is_int) return DP_FORMAT_AUTO;
    return commas ? DP_FORMAT_DOPPLER : DP_FORMAT_STG;
}

/* Prefix err->msg with "file:line: " (for errors from the graph builder). */
static void dp__prefix(dp_error *err, const char *prefix)
{
    size_t pl = strlen(prefix), ml = strlen(err->msg), cap = sizeof err->msg - 1;
    if (pl > cap) pl = cap;
    if (pl + ml > cap) ml = cap - pl;
    memmove(err->msg + pl, err->msg, ml);
    memcpy(err->msg, prefix, pl);
    err->msg[pl + ml] = 0;
}

static int dp__at(dp_error *err, int rc, const char *file, int line)
{
    if (err && rc) {
        char pre[320];
        snprintf(pre, sizeof pre, "%.280s:%d: ", file, line);
        dp__prefix(err, pre);
    }
    return rc;
}

/* Where op i (edge i when edge) of a graph being read was found, for a
   message: "FILE:LINE" (in a binary file, its offset and section), into
   buf: a reader's own. */
typedef void (*dp__where_fn)(const void *ctx, int edge, int i, char *buf, size_t cap);

/* every op and edge in one place: ctx is that place */
static void dp__same_where(const void *ctx, int edge, int i, char *buf, size_t cap)
{
    (void)edge; (void)i;
    snprintf(buf, cap, "%s", (const char *)ctx);
}

/* The end of every graph reader: rc its outcome so far (t its text, NULL
   for a binary file; name the file's name). Its ops may not be indexed
   by name yet (dp__graph_push_op) and its edges may repeat
   (dp__graph_push_edge): the ops are indexed here (but numbered ones,
   dp__numbered, which need no index and repeat no name), and the first op that
   repeats a name, or else the first edge that repeats an edge, is the
   error when there is one, as it would have been at its place ("WHERE:
   duplicate edge a -> b"), before the error the reader met after it. A
   reader that did not fail ends in dp__finalize, whose messages are
   prefixed "name: " (but a duplicate edge's, told at its place). Failed,
   the graph is freed. */
static int dp__read_finish(dp_graph *g, const dp__text *t, int rc, const char *name, dp__where_fn where,
                           const void *ctx, dp_error *err)
{
    char at[400];
    int e = -1, v = -1, first = -1, r;
    if (rc && t && t->nomem) rc = dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory reading the line", name, t->line);
    if (!g->dp__names && !g->dp__numbered && g->n_ops > 0 && (r = dp__index_ops(g, &v, &first, rc ? NULL : err)) != 0) {
        if (v >= 0) {
            where(ctx, 0, v, at, sizeof at);
            rc = dp__fail(err, DP_ERR_GRAPH, "%s: duplicate op name '%s' (first defined as op %d)", at, g->name[v], first);
        } else if (!rc) {
            rc = r;
        }
        dp_graph_free(g);
        return rc;
    }
    if (rc) e = dp__first_dup_edge(g);
    else if ((rc = dp__finalize(g, &e, err)) != 0 && e < 0 && err) {
        char pre[300];
        snprintf(pre, sizeof pre, "%.280s: ", name);
        dp__prefix(err, pre);
    }
    if (e >= 0) {
        where(ctx, 1, e, at, sizeof at);
        rc = dp__fail(err, DP_ERR_GRAPH, "%s: duplicate edge %s -> %s", at, g->name[g->src[e]], g->name[g->dst[e]]);
    }
    if (rc) dp_graph_free(g);
    return rc;
}

/* ---- native ------------------------------------------------------------ */
/* key=value lookup among tokens; returns the value or NULL */
static const char *dp__kv(char **tok, int n, const char *key, int *used)
{
    size_t kl = strlen(key);
    int i;
    for (i = 0; i < n; i++)
        if (strncmp(tok[i], key, kl) == 0 && tok[i][kl] == '=') { used[i] = 1; return tok[i] + kl + 1; }
    return NULL;
}

#define DP__MAX_TOKENS 16
#define DP__CL_TOKENS (DP_MAX_CURVE + 4)   /* a cluster line: kindspeed with a full curve */

static int dp__hexval(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* A bytes that a source name writes as %XX (see >>api-formats). */
static int dp__source_escaped(unsigned char ch)
{
    return ch <= ' ' || ch == 127 || ch == '%' || ch == ',' || ch == '=' || ch == '#';
}

/* The value of an op's source= field, decoded in place: each name's %XX
   escapes replaced, the commas between names turned into NULs; *names
   (freed by the caller) points at the n names. */
static int dp__read_sources(char *s, const char ***names, int *n, const char *file, int line, const char *op, dp_error *err)
{
    char *r = s, *w = s, sep;
    int k = 1, i;
    for (; *r; r++) k += *r == ',';
    if (!(*names = (const char **)dp__alloc((size_t)k, sizeof **names, err, "source names"))) return DP_ERR_NOMEM;
    *n = k;
    for (i = 0, r = s; i < k; i++) {
        (*names)[i] = w;
        if (*r == ',' || !*r) return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': source name %d is empty", file, line, op, i);
        for (; *r && *r != ','; r++) {
            int hi, lo;
            if (*r != '%') { *w++ = *r; continue; }
            hi = dp__hexval((unsigned char)r[1]);
            lo = hi < 0 ? -1 : dp__hexval((unsigned char)r[2]);
            if (lo < 0 || (hi == 0 && lo == 0))
                return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': source name %d: '%.3s' is not an escape %%XX of a byte 01..FF", file, line, op, i, r);
            *w++ = (char)(hi * 16 + lo);
            r += 2;
        }
        sep = *r;   /* w may be at r: read the comma before ending the name */
        *w++ = 0;
        if (sep == ',') r++;
    }
    return 0;
}

/* An op found by name lately (see dp__native_find). */
#define DP__RECENT 16384
typedef struct dp__recent {
    int id;          /* the op + 1, 0: none */
    char key[12];    /* its name's length, then its name when that fits, zero-padded */
} dp__recent;

/* What dp__read_native carries from line to line; one function per
   record reads the line in tok[0..n) (used[i]: field i was taken). */
typedef struct dp__native {
    dp_graph *g;
    dp__text *t;
    char *tok[DP__MAX_TOKENS], *eq[DP__MAX_TOKENS];   /* eq[i]: token i's first '=' (NULL: none) */
    int used[DP__MAX_TOKENS], n;
    const char **srcs;        /* the current op's source names             */
    double *times;            /* [n_dev_time]: the current op's time=      */
    int header, n_dev_time, any_op, ended, counts;  /* counts, ended: the
                                 line of that record, 0 before it          */
    long long want[3];        /* the counts line's ops=, edges=, weights=
                                 (-1: not given)                           */
    int near[2];              /* the last edge's source and target          */
    int room;                 /* every op array has room for this many ops  */
    dp__recent *recent;       /* [DP__RECENT] or NULL: see dp__native_find  */
} dp__native;

/* The values of the fields keys[0..nk) on the line, val[k] NULL where not
   given: for each key the first token "key=...", which is marked used
   (dp__kv's rule for every key, in one pass over the tokens). */
static void dp__native_take(dp__native *x, const char *const *keys, int nk, const char **val)
{
    int i, k;
    for (k = 0; k < nk; k++) val[k] = NULL;
    for (i = 0; i < x->n; i++) {
        const char *tk = x->tok[i], *eq = x->eq[i];
        size_t kl;
        if (!eq) continue;
        kl = (size_t)(eq - tk);
        for (k = 0; k < nk; k++)
            if (!val[k] && dp__name_is(keys[k], tk, kl)) { val[k] = eq + 1; x->used[i] = 1; break; }
    }
}

/* The line's fields that no dp__native_take took: a key given twice
   ("field 'compute' given twice") or one the record does not have. what:
   the record, for the message ("edge: "; "" for none), and with name the
   record and its name ("op " and "a": "op 'a': "). */
static int dp__native_fields(dp__native *x, const char *what, const char *name, dp_error *err)
{
    char q[DP__Q], nm[DP__Q], pre[DP__Q + 16];
    int i, j;
    for (i = 0; i < x->n; i++) {
        char *eq = x->eq[i];
        int twice = 0;
        if (x->used[i]) continue;
        for (j = 0; eq && j < x->n && !twice; j++)
            twice = j != i && x->used[j] && strncmp(x->tok[j], x->tok[i], (size_t)(eq - x->tok[i]) + 1) == 0;
        if (twice) *eq = 0;
        if (name) snprintf(pre, sizeof pre, "%s'%s': ", what, dp__q(nm, name));
        else snprintf(pre, sizeof pre, "%s", what);
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: %s%s '%s'%s", x->t->name, x->t->line, pre, twice ? "field" : "unknown field",
                        dp__q(q, x->tok[i]), twice ? " given twice" : "");
    }
    return 0;
}

static int dp__native_header(dp__native *x, dp_error *err)
{
    char q[DP__Q];
    long long ver;
    if (strcmp(x->tok[0], "doppler-graph") != 0)
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: expected 'doppler-graph 1', found '%s'", x->t->name, x->t->line, dp__q(q, x->tok[0]));
    if (x->n != 2 || dp__int(x->tok[1], 0, INT_MAX, &ver) || ver != 1)
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: unsupported version '%s' (this reader knows 1)", x->t->name, x->t->line, dp__q(q, x->n > 1 ? x->tok[1] : ""));
    x->header = 1;
    return 0;
}

/* The graph's arrays sized for ops more ops and edges more edges (each
   at most its limit), at the current line: 0, or DP_ERR_NOMEM told. */
static int dp__native_reserve(dp__native *x, size_t ops, size_t edges, dp_error *err)
{
    if (ops > DP_MAX_OPS) ops = DP_MAX_OPS;
    if (edges > DP_MAX_EDGES) edges = DP_MAX_EDGES;
    if (dp__graph_reserve(x->g, ops, edges))
        return dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory making room for %zu ops and %zu edges", x->t->name, x->t->line, ops, edges);
    x->room = (int)((size_t)x->g->n_ops + ops < DP_MAX_OPS ? (size_t)x->g->n_ops + ops : DP_MAX_OPS);
    return 0;
}

/* counts [ops=N] [edges=E] [weights=W]: what the file holds, checked at
   its end (dp__native_finish); before the first weight, op or edge. The
   graph's arrays are sized for them at once, but never for more than the
   rest of the file can hold (an op line takes at least 4 bytes, an edge
   line 8), so that a count declared wrong costs nothing. */
static int dp__native_counts(dp__native *x, dp_error *err)
{
    static const char *const key[3] = { "ops", "edges", "weights" };
    const char *val[3];
    char q[DP__Q];
    size_t rest = (size_t)(x->t->end - x->t->p), ops, edges;
    int k;
    if (x->counts) return dp__fail(err, DP_ERR_PARSE, "%s:%d: a second 'counts' line (the first is line %d)", x->t->name, x->t->line, x->counts);
    if (x->any_op || x->g->n_weights) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'counts' must come before the first weight and op", x->t->name, x->t->line);
    dp__native_take(x, key, 3, val);
    for (k = 0; k < 3; k++) {
        dp_code bad = val[k] ? dp__count(val[k], 0, INT_MAX, &x->want[k], DP_ERR_PARSE) : DP_OK;
        if (bad) return dp__fail(err, bad, "%s:%d: counts: %s '%s' is not a count", x->t->name, x->t->line, key[k], dp__q(q, val[k]));
    }
    x->counts = x->t->line;
    if ((k = dp__native_fields(x, "counts: ", NULL, err))) return k;
    ops = x->want[0] < 0 ? 0 : (size_t)x->want[0] < rest / 4 + 1 ? (size_t)x->want[0] : rest / 4 + 1;
    edges = x->want[1] < 0 ? 0 : (size_t)x->want[1] < rest / 8 + 1 ? (size_t)x->want[1] : rest / 8 + 1;
    return dp__native_reserve(x, ops, edges, err);
}

static int dp__native_units(dp__native *x, dp_error *err)
{
    static const char *const key[2] = { "speed", "bandwidth" };
    const char *val[2], *sp, *bw;
    dp_graph *g = x->g;
    char q[DP__Q];
    int r = 0;
    dp__native_take(x, key, 2, val);
    sp = val[0]; bw = val[1];
    if (sp && (r = dp__num(sp, &g->unit_speed, 0)) == 0 && g->unit_speed <= 0) r = -3;
    if (sp && r) return dp__fail(err, DP_ERR_RANGE, "%s:%d: units speed '%s' must be a positive number", x->t->name, x->t->line, dp__q(q, sp));
    if (bw && (r = dp__num(bw, &g->unit_bandwidth, 0)) == 0 && g->unit_bandwidth <= 0) r = -3;
    if (bw && r) return dp__fail(err, DP_ERR_RANGE, "%s:%d: units bandwidth '%s' must be a positive number", x->t->name, x->t->line, dp__q(q, bw));
    return dp__native_fields(x, "", NULL, err);
}

static int dp__native_ext(dp__native *x, dp_error *err)
{
    char q[DP__Q];
    long long k = 0;
    dp_code bad = x->n != 2 ? DP_ERR_PARSE : dp__count(x->tok[1], 0, DP_MAX_OPS, &k, DP_ERR_PARSE);
    if (bad) return dp__fail(err, bad, "%s:%d: external_inputs '%s' is not a count in 0..%d (DP_MAX_OPS)", x->t->name, x->t->line, dp__q(q, x->n > 1 ? x->tok[1] : ""), DP_MAX_OPS);
    x->g->n_ext_inputs = (int)k;
    return 0;
}

static int dp__native_devtimes(dp__native *x, dp_error *err)
{
    char q[DP__Q];
    long long k = 0;
    dp_code bad;
    if (x->any_op) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'devtimes' must come before the first op", x->t->name, x->t->line);
    bad = x->n != 2 ? DP_ERR_RANGE : dp__count(x->tok[1], 1, DP_MAX_DEVICES, &k, DP_ERR_RANGE);
    if (bad) return dp__fail(err, bad, "%s:%d: devtimes '%s' is not a count in 1..%d (DP_MAX_DEVICES)", x->t->name, x->t->line, dp__q(q, x->n > 1 ? x->tok[1] : ""), DP_MAX_DEVICES);
    x->n_dev_time = (int)k;
    DP_FREE(x->times);
    x->times = (double *)dp__alloc((size_t)k, sizeof(double), err, "per-device times");
    return x->times ? 0 : DP_ERR_NOMEM;
}

/* The fields of an op line, in the order dp__native_op reads them. */
enum { DP__F_KIND, DP__F_COMPUTE, DP__F_BYTES, DP__F_MEM, DP__F_RESIDENT, DP__F_WEIGHTS, DP__F_SOURCE,
       DP__F_SHAPE, DP__F_ARG, DP__F_TIME, DP__F_OP_FIELDS };

/* An op's shape=, arg= and time= fields (val: its fields) into d. */
static int dp__native_op_more(dp__native *x, dp_op_desc *d, const char *const *val, dp_error *err)
{
    dp__text *t = x->t;
    char q[DP__Q], nm[DP__Q];
    const char *s;
    int r;
    if ((s = val[DP__F_SHAPE]) != NULL) {
        char *xp = NULL, tmp[64];
        long long r1 = 0, c1 = 0;
        snprintf(tmp, sizeof tmp, "%s", s);
        xp = strlen(s) < sizeof tmp ? strchr(tmp, 'x') : NULL;
        if (xp) *xp = 0;
        if (!xp || dp__int(tmp, 1, 1 << 20, &r1) || dp__int(xp + 1, 1, 1 << 20, &c1))
            return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': shape '%s' is not ROWSxCOLS (1..1048576 each)", t->name, t->line, dp__q(nm, d->name), dp__q(q, s));
        d->rows = (int)r1; d->cols = (int)c1;
    }
    if ((s = val[DP__F_ARG]) != NULL) {
        long long a1;
        if (dp__int(s, 0, INT_MAX, &a1)) return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': arg '%s' is not a non-negative integer", t->name, t->line, dp__q(nm, d->name), dp__q(q, s));
        d->arg = (int)a1;
    }
    if ((s = val[DP__F_TIME]) != NULL) {
        char part[64];
        int k = 0;
        if (!x->n_dev_time) return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': time= given without a 'devtimes N' line", t->name, t->line, dp__q(nm, d->name));
        while (*s) {
            size_t l = strcspn(s, ",");
            if (k >= x->n_dev_time || l == 0 || l >= sizeof part) { k = -1; break; }
            memcpy(part, s, l); part[l] = 0;
            if ((r = dp__num(part, &x->times[k], 1)) != 0)
                return dp__fail(err, dp__num_code(r), "%s:%d: op '%s': time on device %d '%s' %s", t->name, t->line, dp__q(nm, d->name), k, part, dp__num_problem(r));
            k++; s += l; if (*s == ',') s++;
        }
        if (k != x->n_dev_time) return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': time= needs %d comma-separated values", t->name, t->line, dp__q(nm, d->name), x->n_dev_time);
        d->dev_time = x->times; d->n_dev_time = x->n_dev_time;
    } else if (x->n_dev_time) {
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': missing time= (devtimes %d was declared)", t->name, t->line, dp__q(nm, d->name), x->n_dev_time);
    }
    return 0;
}

/* At the first op of a file without a counts line: the ops and edges the
   rest of it holds, by its lines that begin "op " and "edge " (a file in
   the usual layout; a count that is off costs a copy as the arrays grow,
   nothing else), and the graph's arrays sized for them at once. Else
   every array doubles as it fills, and copying them was a third of
   reading a chain of 10^6 ops (bench/RESULTS.md part 3). One pass of
   memchr over the text; an out-of-memory for the room is the read's
   failure, as a counts line's is. */
static int dp__native_presize(dp__native *x, dp_error *err)
{
    const char *p = x->t->p, *e = x->t->end;
    size_t ops = 1, edges = 0;   /* this op's line is read already */
    while (p && p < e) {
        if (e - p > 3 && memcmp(p, "op ", 3) == 0) ops++;
        else if (e - p > 5 && memcmp(p, "edge ", 5) == 0) edges++;
        if ((p = (const char *)memchr(p, '\n', (size_t)(e - p))) != NULL) p++;
    }
    return dp__native_reserve(x, ops, edges, err);
}

/* Adds op d of the line (its id in *id): the ops before the first edge
   are indexed by name at that edge; a failure told at the line. */
static int dp__native_add_op(dp__native *x, const dp_op_desc *d, int *id, dp_error *err)
{
    int rc = x->g->dp__names ? dp_graph_add_op(x->g, d, id, err) : dp__graph_push_op(x->g, d, id, err);
    return rc ? dp__at(err, rc, x->t->name, x->t->line) : 0;
}

static int dp__native_op(dp__native *x, dp_error *err)
{
    static const char *const key[DP__F_OP_FIELDS] = { "kind", "compute", "bytes", "mem", "resident", "weights", "source",
                                                      "shape", "arg", "time" };
    static const char *const what[4] = { "compute cost", "bytes", "mem", "resident" };
    dp__text *t = x->t;
    dp_op_desc d;
    char nm[DP__Q], q[DP__Q];   /* the op's name and a value, quoted in a message */
    const char *val[DP__F_OP_FIELDS], *wl;
    double *num[4];
    int id, r, rc, k;
    memset(&d, 0, sizeof d);
    if (!x->any_op && !x->counts && (rc = dp__native_presize(x, err))) return rc;
    if (x->n < 2 || x->eq[1]) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'op' needs a name", t->name, t->line);
    d.name = x->tok[1]; x->used[1] = 1;
    dp__native_take(x, key, DP__F_OP_FIELDS, val);
    if (val[DP__F_KIND] && dp_kind_parse(val[DP__F_KIND], &d.kind))
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: op '%s': unknown kind '%s'", t->name, t->line, dp__q(nm, d.name), dp__q(q, val[DP__F_KIND]));
    num[0] = &d.compute; num[1] = &d.out_bytes; num[2] = &d.mem_bytes; num[3] = &d.resident;
    for (k = 0; k < 4; k++)
        if (val[DP__F_COMPUTE + k] && (r = dp__num(val[DP__F_COMPUTE + k], num[k], 0)) != 0)
            return dp__fail(err, dp__num_code(r), "%s:%d: op '%s': %s '%s' %s", t->name, t->line, dp__q(nm, d.name), what[k],
                            dp__q(q, val[DP__F_COMPUTE + k]), dp__num_problem(r));
    wl = val[DP__F_WEIGHTS];
    if (val[DP__F_SOURCE]) {
        DP_FREE(x->srcs); x->srcs = NULL;
        if ((rc = dp__read_sources((char *)val[DP__F_SOURCE], &x->srcs, &d.n_source, t->name, t->line, dp__q(nm, d.name), err))) return rc;
        d.source = x->srcs;
    }
    if ((rc = dp__native_op_more(x, &d, val, err))) return rc;
    if ((rc = dp__native_fields(x, "op ", d.name, err))) return rc;
    if ((rc = dp__native_add_op(x, &d, &id, err))) return rc;
    while (wl && *wl) {   /* weights=A,B,...: declared weights */
        char wn[DP_MAX_NAME + 2];
        size_t l = strcspn(wl, ",");
        int w = -1;
        if (l > 0 && l <= DP_MAX_NAME) { memcpy(wn, wl, l); wn[l] = 0; w = dp_graph_find_weight(x->g, wn); }
        if (w < 0) return dp__fail(err, DP_ERR_GRAPH, "%s:%d: op '%s': weight '%.*s' is not a declared weight", t->name, t->line, dp__q(nm, d.name), (int)(l < 200 ? l : 200), wl);
        if ((rc = dp_graph_use_weight(x->g, id, w, err))) return dp__at(err, rc, t->name, t->line);
        wl += l;
        if (*wl == ',') wl++;
    }
    x->any_op = 1;
    return 0;
}

/* An op line of the usual form, "op NAME" then fields among compute=,
   bytes=, mem= and resident=, each at most once, with one space between
   its words and nothing else, read from the text as it stands (no
   copy into tokens, no search of the ten keys an op may have): 1 when it
   was read so (*rc: 0, or the failure to add the op, told as
   dp__native_op tells it), 0 for any other line, or one with a value
   that is no number, which is read the general way, every fault told
   there; nothing is changed before that is known. Such lines are most
   of a large generated file; this way the tokenizer's byte-by-byte copy
   and the search of ten keys are skipped (a fifth of the instructions
   of reading a chain). */
static int dp__native_op_line(dp__native *x, const char *s, size_t n, int *rc, dp_error *err)
{
    static const char *const key[4] = { "compute", "bytes", "mem", "resident" };
    const char *p, *tk, *eq, *end = s + n;
    char name[DP_MAX_NAME + 1], num[64];
    double *field[4];
    dp_op_desc d;
    dp_graph *g = x->g;
    size_t len;
    int seen = 0, k, id;
    if (n < 4 || memcmp(s, "op ", 3) != 0 || x->n_dev_time) return 0;
    memset(&d, 0, sizeof d);
    field[0] = &d.compute; field[1] = &d.out_bytes; field[2] = &d.mem_bytes; field[3] = &d.resident;
    /* (a byte past '#', as letters and digits are, is no ' ', '\t' or '#') */
    for (tk = p = s + 3; p < end && *p != ' '; p++)
        if (((unsigned char)*p <= '#' && (*p == '\t' || *p == '#')) || *p == '=') return 0;
    if (p == tk || (size_t)(p - tk) > DP_MAX_NAME) return 0;
    len = (size_t)(p - tk);
    memcpy(name, tk, len);
    name[len] = 0;
    while (p < end) {   /* p at a space */
        size_t kl;
        for (tk = ++p; p < end && *p != ' '; p++)
            if ((unsigned char)*p <= '#' && (*p == '\t' || *p == '#')) return 0;
        for (eq = tk; eq < p && *eq != '='; eq++) {}
        if (eq == p || p - eq - 1 <= 0 || (size_t)(p - eq - 1) >= sizeof num) return 0;
        kl = (size_t)(eq - tk);
        k = kl == 7 && memcmp(tk, key[0], 7) == 0 ? 0 : kl == 5 && memcmp(tk, key[1], 5) == 0 ? 1
          : kl == 3 && memcmp(tk, key[2], 3) == 0 ? 2 : kl == 8 && memcmp(tk, key[3], 8) == 0 ? 3 : 4;
        if (k == 4 || (seen >> k & 1)) return 0;
        seen |= 1 << k;
        memcpy(num, eq + 1, (size_t)(p - eq - 1));
        num[p - eq - 1] = 0;
        if (dp__num(num, field[k], 0) != 0) return 0;
    }
    d.name = name;
    if (!x->any_op && !x->counts && (*rc = dp__native_presize(x, err))) return 1;
    if (g->n_ops < x->room && !g->dp__names && !g->n_dev_time && dp__valid_name_n(name, len)) {   /* room made, names not indexed yet */
        if (dp__graph_put_op(g, name, len, DP_OP_OPAQUE, d.compute, d.out_bytes, d.mem_bytes, d.resident))
            *rc = dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory adding op '%s' (op %d)", x->t->name, x->t->line, name, g->n_ops);
        else x->any_op = 1;
        return 1;
    }
    if (!(*rc = dp__native_add_op(x, &d, &id, err))) x->any_op = 1;   /* its faults told the general way */
    return 1;
}

static int dp__native_weight(dp__native *x, dp_error *err)
{
    static const char *const key[1] = { "bytes" };
    dp__text *t = x->t;
    double wb = 0;
    char nm[DP__Q], q[DP__Q];
    const char *s;
    int r, rc;
    if (x->any_op) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'weight' must come before the first op", t->name, t->line);
    if (x->n < 2 || strchr(x->tok[1], '=')) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'weight' needs a name", t->name, t->line);
    x->used[1] = 1;
    dp__native_take(x, key, 1, &s);
    if (s && (r = dp__num(s, &wb, 0)) != 0)
        return dp__fail(err, dp__num_code(r), "%s:%d: weight '%s': bytes '%s' %s", t->name, t->line, dp__q(nm, x->tok[1]), dp__q(q, s), dp__num_problem(r));
    if ((rc = dp__native_fields(x, "weight ", x->tok[1], err))) return rc;
    if ((rc = dp_graph_add_weight(x->g, x->tok[1], wb, NULL, err))) return dp__at(err, rc, t->name, t->line);
    return 0;
}

/* The op named by the n bytes at s, or -1: an edge's source (src -1), or
   the target of an edge from op src. Files list their edges grouped: a
   chain's edge starts where the last one ended, the edges into one op or
   out of one come together, the next op's edges follow. So the last edge's
   ops and the ops after them are tried first, a compare with a name just
   read, where the name index probes a random place of a table as large as
   the ops (for a large graph, a miss of every cache). Then the ops found
   by name lately: a table of DP__RECENT entries (256 KiB) by the low bits
   of the name's hash, which holds the sources of a layered graph's edges,
   drawn from the last few levels (a few thousand ops), where the name
   index is a cache miss each (a third of reading a random graph of 10^6
   ops and 10^7 edges, bench/RESULTS.md part 3). An entry holds a name of
   up to 11 bytes itself, so that it is compared without reading the op's
   (a longer one: the op's). An edge's target that is the next op goes into
   that table too: in a file that lists the edges by target, an op is a
   target before it is a source, and its first lookup as a source then
   finds it there, not in the index. An id from either is taken only when
   its op's name is the one read: the same op the index gives, names being
   unique. But not a target whose edge comes from the op before it (src is
   its id less one): in a chain the next line finds it near, as its source,
   and the table's update (a hash and a store at a random place) was 4% of
   the instructions of reading one (valgrind, the 10^6-op chain). */
static int dp__native_find(const dp__native *x, const char *s, size_t n, int src)
{
    const dp_graph *g = x->g;
    dp__recent *r;
    char key[12];
    int near[3], k, id = -1, table = x->recent && n <= 255, dst = src >= 0;
    uint64_t h;
    near[0] = dst ? x->near[1] : x->near[0];        /* the same op again */
    near[1] = near[0] + 1;                          /* the next one       */
    near[2] = dst ? -1 : x->near[1];                /* a chain: the last target */
    for (k = 0; k < 3 && id < 0; k++)
        if (near[k] >= 0 && near[k] < g->n_ops && dp__op_name_is(g, near[k], s, n)) id = near[k];
    /* found near: done, but for a target that is the next op, remembered */
    if (id >= 0 && !(table && dst && id == near[1] && src != id - 1)) return id;
    h = dp__hash_mem(s, n);
    if (!table) return dp__index_find_mem(g->dp__names, g->name, s, n, h);
    memset(key, 0, sizeof key);
    key[0] = (char)n;
    if (n < sizeof key) memcpy(key + 1, s, n);
    r = &x->recent[h & (DP__RECENT - 1)];
    if (id < 0) {
        if (r->id > 0 && memcmp(r->key, key, sizeof key) == 0 && (n < sizeof key || dp__op_name_is(g, r->id - 1, s, n))) return r->id - 1;
        id = dp__index_find_mem(g->dp__names, g->name, s, n, h);
    }
    if (id >= 0) { r->id = id + 1; memcpy(r->key, key, sizeof key); }
    return id;
}

/* The ops named before the first edge, indexed at it (dp__index_ops; a
   repeated name is told by dp__read_finish), and dp__native_find's table
   of recent ones made (without it, when out of memory: it only saves
   time). */
static int dp__native_index(dp__native *x, dp_error *err)
{
    int dup, first;
    if (x->g->dp__names || x->g->n_ops == 0) return 0;
    if (!x->recent && x->g->n_ops > DP__RECENT) x->recent = (dp__recent *)dp__zalloc(DP__RECENT * sizeof *x->recent);
    return dp__index_ops(x->g, &dup, &first, err);
}

/* An edge line of the usual form, "edge SRC DST" with a space between its
   words and nothing else, read from the text as it stands: 1 when the
   line is one of its ops and was added (*rc: 0, or the failure to add
   it), 0 for any other line (or ops not found, a self loop), which is
   read the general way: the same edge, or its fault told. */
static int dp__native_edge_line(dp__native *x, const char *s, size_t n, int *rc, dp_error *err)
{
    const char *a, *b, *p, *end = s + n;
    int va, vb;
    if (n < 8 || memcmp(s, "edge ", 5) != 0) return 0;
    for (a = p = s + 5; p < end && *p != ' ' && *p != '\t' && *p != '#'; p++) {}
    if (p == a || p == end || *p != ' ') return 0;
    for (b = ++p; p < end && *p != ' ' && *p != '\t' && *p != '#'; p++) {}
    if (p == b || p != end) return 0;
    if ((*rc = dp__native_index(x, err))) return 1;
    if ((va = dp__native_find(x, a, (size_t)(b - 1 - a), -1)) < 0 || (vb = dp__native_find(x, b, (size_t)(end - b), va)) < 0 || va == vb) return 0;
    if ((*rc = dp__graph_push_edge(x->g, va, vb, x->g->out_bytes[va], err))) return dp__at(err, *rc, x->t->name, x->t->line), 1;
    x->near[0] = va; x->near[1] = vb;
    return 1;
}

static int dp__native_edge(dp__native *x, dp_error *err)
{
    static const char *const key[1] = { "bytes" };
    dp__text *t = x->t;
    dp_graph *g = x->g;
    char q[DP__Q], qa[DP__Q], qb[DP__Q];
    int a, b, r, rc;
    double bytes;
    const char *s;
    if (x->n < 3) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'edge' needs SRC and DST", t->name, t->line);
    if ((rc = dp__native_index(x, err))) return rc;
    x->used[1] = x->used[2] = 1;
    if ((a = dp__native_find(x, x->tok[1], strlen(x->tok[1]), -1)) < 0) return dp__fail(err, DP_ERR_GRAPH, "%s:%d: edge source '%s' is not a declared op", t->name, t->line, dp__q(qa, x->tok[1]));
    if ((b = dp__native_find(x, x->tok[2], strlen(x->tok[2]), a)) < 0) return dp__fail(err, DP_ERR_GRAPH, "%s:%d: edge target '%s' is not a declared op", t->name, t->line, dp__q(qb, x->tok[2]));
    bytes = g->out_bytes[a];
    dp__native_take(x, key, 1, &s);
    if (s && (r = dp__num(s, &bytes, 0)) != 0)
        return dp__fail(err, dp__num_code(r), "%s:%d: edge %s -> %s: bytes '%s' %s", t->name, t->line, dp__q(qa, x->tok[1]),
                        dp__q(qb, x->tok[2]), dp__q(q, s), dp__num_problem(r));
    if ((rc = dp__native_fields(x, "edge: ", NULL, err))) return rc;
    if ((rc = dp__graph_push_edge(g, a, b, bytes, err))) return dp__at(err, rc, t->name, t->line);
    x->near[0] = a; x->near[1] = b;
    return 0;
}

/* Where op or edge i of a native file was read: the line of its i-th
   'op' or 'edge' record (every op and edge before the point the reader
   stopped was read from one, in order). */
static void dp__native_where(const void *ctx, int edge, int i, char *buf, size_t cap)
{
    dp__text t = *(const dp__text *)ctx;
    const char *rec = edge ? "edge" : "op", *s;
    size_t n, rl = strlen(rec);
    t.p = t.start; t.line = 0;
    while (dp__text_view(&t, &s, &n)) {
        while (n > 0 && (*s == ' ' || *s == '\t')) { s++; n--; }
        if (n > rl && memcmp(s, rec, rl) == 0 && (s[rl] == ' ' || s[rl] == '\t') && i-- == 0) break;
    }
    snprintf(buf, cap, "%s:%d", t.name, t.line);
}

/* The line s .. s + n split into x->tok at spaces and tabs, up to a '#',
   copied into t->buf, with x->eq[i] the first '=' of token i (NULL: none):
   dp__text_line and dp__split in one pass. The count of tokens
   (DP__MAX_TOKENS + 1 when there are more), or -1 when out of memory. */
static int dp__native_split(dp__native *x, const char *s, size_t n)
{
    dp__text *t = x->t;
    size_t i = 0;
    char *w, c = 0;
    int k = 0;
    if (dp__text_room(t, n)) return -1;
    w = t->buf;
    for (;;) {
        while (i < n && ((c = s[i]) == ' ' || c == '\t')) i++;
        if (i == n || c == '#') return k;
        if (k == DP__MAX_TOKENS) return k + 1;
        x->tok[k] = w; x->eq[k] = NULL;
        for (; i < n && (c = s[i]) != ' ' && c != '\t' && c != '#'; i++) {
            if (c == '=' && !x->eq[k]) x->eq[k] = w;
            *w++ = c;
        }
        *w++ = 0;
        k++;
    }
}

/* At the end of the file: the counts its 'counts' line declares against
   what the file held; such a file must also have its 'end' line. A file
   without a 'counts' line (written before there was one) is read without
   this check. */
static int dp__native_finish(dp__native *x, dp_error *err)
{
    static const char *const what[3] = { "ops", "edges", "weights" };
    const dp_graph *g = x->g;
    long long have[3];
    char decl[96] = "", miss[160] = "";
    int k, given = 0, match = 1;
    have[0] = g->n_ops; have[1] = g->n_edges; have[2] = g->n_weights;
    for (k = 0; k < 3; k++) {
        size_t dl = strlen(decl), ml = strlen(miss);
        if (x->want[k] < 0) continue;
        given = 1;
        snprintf(decl + dl, sizeof decl - dl, "%s%lld %s", dl ? ", " : "", x->want[k], what[k]);
        if (have[k] == x->want[k]) continue;
        match = 0;
        snprintf(miss + ml, sizeof miss - ml, "%s%lld of %lld %s", ml ? ", " : "", have[k], x->want[k], what[k]);
    }
    if (!given || (match && x->ended)) return 0;
    if (!x->ended)
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: the file ends without its 'end' line%s%s (line %d declares %s)",
                        x->t->name, x->t->line, match ? "" : ", holding ", miss, x->counts, decl);
    return dp__fail(err, DP_ERR_PARSE, "%s:%d: the file holds %s, but its 'counts' line %d declares %s (correct the counts or remove that line)",
                    x->t->name, x->ended, miss, x->counts, decl);
}

static int dp__read_native(dp_graph *g, dp__text *t, const char *name, dp_error *err)
{
    dp__native x;
    char q[DP__Q];
    const char *s;
    size_t n;
    int rc = 0, r = 0;
    memset(&x, 0, sizeof x);
    x.g = g; x.t = t; x.want[0] = x.want[1] = x.want[2] = -1;
    while (!rc && dp__text_view(t, &s, &n)) {
        const char *rec;
        if (x.header && !x.ended && (dp__native_edge_line(&x, s, n, &rc, err) || dp__native_op_line(&x, s, n, &rc, err))) continue;
        if ((x.n = dp__native_split(&x, s, n)) < 0) { r = -1; break; }
        if (x.n == 0) continue;
        if (x.n > DP__MAX_TOKENS) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: too many fields (more than %d)", t->name, t->line, DP__MAX_TOKENS); break; }
        memset(x.used, 0, sizeof x.used);
        x.used[0] = 1;
        rec = x.tok[0];
        if (x.ended) rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: '%s' after the 'end' line (line %d)", t->name, t->line, dp__q(q, rec), x.ended);
        else if (!x.header) rc = dp__native_header(&x, err);
        else if (strcmp(rec, "op") == 0) rc = dp__native_op(&x, err);
        else if (strcmp(rec, "edge") == 0) rc = dp__native_edge(&x, err);
        else if (strcmp(rec, "weight") == 0) rc = dp__native_weight(&x, err);
        else if (strcmp(rec, "units") == 0) rc = dp__native_units(&x, err);
        else if (strcmp(rec, "external_inputs") == 0) rc = dp__native_ext(&x, err);
        else if (strcmp(rec, "devtimes") == 0) rc = dp__native_devtimes(&x, err);
        else if (strcmp(rec, "counts") == 0) rc = dp__native_counts(&x, err);
        else if (strcmp(rec, "end") == 0) { x.ended = t->line; rc = dp__native_fields(&x, "end: ", NULL, err); }
        else rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: unknown record '%s' (expected op, edge, weight, units, devtimes, counts, end)", t->name, t->line, dp__q(q, rec));
    }
    if (!rc && r < 0) rc = dp__fail(err, DP_ERR_NOMEM, "%s: out of memory", t->name);
    if (!rc && !x.header) rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: empty file (expected 'doppler-graph 1')", t->name, t->line > 0 ? t->line : 1);
    if (!rc) rc = dp__native_finish(&x, err);
    if (!rc && !x.any_op) rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: no ops", t->name, t->line);
    DP_FREE(x.times);
    DP_FREE(x.srcs);
    DP_FREE(x.recent);
    return dp__read_finish(g, t, rc, name, dp__native_where, t, err);
}

static void dp__write_num(FILE *f, const char *key, double v) { fprintf(f, " %s=%.17g", key, v); }

static int dp__write_native(const dp_graph *g, FILE *f)
{
    const unsigned char *p;
    int i, k;
    fprintf(f, "doppler-graph 1\ncounts ops=%d edges=%d weights=%d\n", g->n_ops, g->n_edges, g->n_weights);
    if (g->unit_speed != 1.0 || g->unit_bandwidth != 1.0)
        fprintf(f, "units speed=%.17g bandwidth=%.17g\n", g->unit_speed, g->unit_bandwidth);
    if (g->n_ext_inputs) fprintf(f, "external_inputs %d\n", g->n_ext_inputs);
    if (g->n_dev_time) fprintf(f, "devtimes %d\n", g->n_dev_time);
    for (i = 0; i < g->n_weights; i++) {
        fprintf(f, "weight %s", g->weight_name[i]);
        dp__write_num(f, "bytes", g->weight_bytes[i]);
        fputc('\n', f);
    }
    for (i = 0; i < g->n_ops; i++) {
        fprintf(f, "op %s", g->name[i]);
        if (g->kind[i] != DP_OP_OPAQUE) fprintf(f, " kind=%s", dp_kind_name(g->kind[i]));
        dp__write_num(f, "compute", g->compute[i]);
        if (g->out_bytes[i] != 0) dp__write_num(f, "bytes", g->out_bytes[i]);
        if (g->mem_bytes[i] != 0) dp__write_num(f, "mem", g->mem_bytes[i]);
        if (g->resident[i] != 0) dp__write_num(f, "resident", g->resident[i]);
        if (g->wuse_off && g->wuse_off[i + 1] > g->wuse_off[i]) {
            for (k = g->wuse_off[i]; k < g->wuse_off[i + 1]; k++)
                fprintf(f, "%s%s", k == g->wuse_off[i] ? " weights=" : ",", g->weight_name[g->wuse[k]]);
        }
        if (g->rows[i]) fprintf(f, " shape=%dx%d", g->rows[i], g->cols[i]);
        if (g->arg[i]) fprintf(f, " arg=%d", g->arg[i]);
        if (g->n_dev_time) {
            fprintf(f, " time=");
            for (k = 0; k < g->n_dev_time; k++)
                fprintf(f, "%s%.17g", k ? "," : "", g->dev_time[(size_t)i * g->n_dev_time + k]);
        }
        for (k = 0, p = (const unsigned char *)g->source[i]; k < g->n_source[i]; k++, p++) {
            fputs(k ? "," : " source=", f);
            for (; *p; p++)
                if (dp__source_escaped(*p)) fprintf(f, "%%%02X", *p);
                else fputc(*p, f);
        }
        fputc('\n', f);
    }
    for (i = 0; i < g->n_edges; i++) {
        fprintf(f, "edge %s %s", g->name[g->src[i]], g->name[g->dst[i]]);
        if (g->bytes[i] != g->out_bytes[g->src[i]]) dp__write_num(f, "bytes", g->bytes[i]);
        fputc('\n', f);
    }
    fputs("end\n", f);
    return 0;
}

/* ---- DOPPLER reference ------------------------------------------------- */
/* The failure of the list entry tok .. p (end: the list's end): too long,
   not digits, or past 2^53. */
static int dp__list_fail(const dp__text *t, const char *tok, const char *p, const char *end, dp_error *err)
{
    size_t l = (size_t)(p - tok), i;
    if (l >= 32) return dp__fail(err, DP_ERR_RANGE, "%s:%d: integer overflow in '%.*s'", t->name, t->line, (int)(end - tok < 40 ? end - tok : 40), tok);
    for (i = 0; i < l; i++)
        if (tok[i] < '0' || tok[i] > '9') return dp__fail(err, DP_ERR_PARSE, "%s:%d: '%.*s' is not a non-negative integer", t->name, t->line, (int)l, tok);
    return dp__fail(err, DP_ERR_RANGE, "%s:%d: integer overflow: '%.*s'", t->name, t->line, (int)l, tok);
}

/* The integers of the list s .. end (comma, space or tab separated
   non-negative integers below 2^53), counted on from *count (at most
   DP_MAX_EDGES in all), each appended to out (NULL: not kept) as an int
   (past INT_MAX: INT_MAX, which no op index reaches; dp__list_at gives
   the value for a message), the first two counted in first[2] (NULL: not
   kept); 0, or the code of the failure (messages at t's line). One pass
   over the digits, on the text as it stands: the edge lists are lines of
   megabytes. An entry of at most 15 digits is below 10^15 < 2^53 and so
   needs no check on its way; a longer one (leading zeros may keep it
   small) is read again with one. The entries go into out's room as it
   stands, grown when full, its length set once at the end (or at a
   failure). */
#define DP__LIST_SEP(ch) ((ch) == ',' || (ch) == ' ' || (ch) == '\t')
static int dp__list(const dp__text *t, const char *s, const char *end, int **out, long long *first, long long *count, dp_error *err)
{
    int *o = out ? *out : NULL;
    size_t len = DP__LEN(o), cap = DP__CAP(o), len0 = len;
    long long c = *count;
    int rc = 0;
    while (s < end && DP__LIST_SEP(*s)) s++;
    while (s < end) {   /* at an entry */
        const char *tok = s;
        uint64_t x = 0;
        unsigned d;
        int k = 8;   /* below 8: the digits are known to end at s */
        if (end - s >= 8) {   /* up to eight digits at once */
            uint64_t w = dp__le64((const unsigned char *)s), nd;
            /* a byte's high nibble is 3 and, 6 added, still 3: a digit.
               A carry out of a byte (one of 0xFA..0xFF) only reaches the
               bytes after it: the first non-digit is still found. */
            nd = ((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ^ 0x3333333333333333ULL;
            k = nd ? dp__ctz64(nd) / 8 : 8;
            if (k) {   /* the k digits, first the most significant, shifted up */
                uint64_t v = (w << (8 * (8 - k))) & 0x0F0F0F0F0F0F0F0FULL;   /* zeros in front */
                v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;             /* pairs */
                v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;           /* fours */
                x = (v * 10000 + (v >> 32)) & 0xFFFFFFFFULL;                 /* eight */
                s += k;
            }
            if (k <= 6 && ((w >> (8 * k)) & 0xFFFF) == (',' | ' ' << 8)) {   /* ", ", as the reference writes */
                s += 2;
                goto entry;
            }
        }
        if (k == 8)
            for (; s < end && (d = (unsigned)(unsigned char)*s - '0') <= 9; s++) x = 10 * x + d;
        if (s - tok > 15 || (s < end && !DP__LIST_SEP(*s))) {   /* long, or not digits */
            int digits = 1;
            for (s = tok, x = 0; s < end && !DP__LIST_SEP(*s); s++) {
                d = (unsigned)(unsigned char)*s - '0';
                if (d > 9) digits = 0;
                else if (x <= (1ULL << 53)) x = 10 * x + d;   /* past 2^53 it stays past */
            }
            if (!digits || s - tok >= 32 || x > (1ULL << 53)) { rc = dp__list_fail(t, tok, s, end, err); break; }
        }
    entry:   /* x, the entry tok .. s */
        while (s < end && DP__LIST_SEP(*s)) s++;
        if (c >= DP_MAX_EDGES) { rc = dp__fail(err, DP_ERR_LIMIT, "%s:%d: more than %d entries", t->name, t->line, DP_MAX_EDGES); break; }
        if (first && c < 2) first[c] = (long long)x;
        c++;
        if (!out) continue;
        if (len == cap) {
            if (o) DP__HDR(o)->len = len;
            if (DP__GROW(*out, len + 1)) { rc = dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory reading integers", t->name, t->line); break; }
            o = *out; cap = DP__CAP(o);
        }
        o[len++] = x > INT_MAX ? INT_MAX : (int)x;
    }
    if (o) { DP__HDR(o)->len = len; DP__HDR(o)->wrote += len - len0; }
    *count = c;
    return rc;
}
#undef DP__LIST_SEP

/* The i-th integer of a list that dp__list read without an error. */
static long long dp__list_at(const char *s, const char *end, int i)
{
    long long v = -1;
    for (; s < end && i >= 0; i--) {
        while (s < end && (*s == ',' || *s == ' ' || *s == '\t')) s++;
        for (v = 0; s < end && *s >= '0' && *s <= '9'; s++) v = 10 * v + (*s - '0');
    }
    return v;
}

/* The next line that is not blank (only spaces, tabs and commas), as it
   stands: 1, or 0 at the end. */
static int dp__next_content_view(dp__text *t, const char **s, size_t *n)
{
    while (dp__text_view(t, s, n)) {
        size_t i = 0;
        while (i < *n && ((*s)[i] == ' ' || (*s)[i] == '\t' || (*s)[i] == ',')) i++;
        if (i < *n) return 1;
    }
    return 0;
}

/* One op line "comp,comm[,type]" (s, n as it stands) into d. */
static int dp__doppler_op(const dp__text *t, const char *s, size_t n, int i, dp_op_desc *d, dp_error *err)
{
    const char *f[4], *fe[4];
    char q[DP__Q], kind[16];
    long long vals[2] = { 0, 0 }, count = 0;
    size_t i0 = 0, i1;
    int nf = 0, k, rc;
    while (nf < 4) {   /* up to 4 comma-separated fields, leading and trailing blanks cut */
        while (i0 < n && (s[i0] == ' ' || s[i0] == '\t')) i0++;
        for (i1 = i0; i1 < n && s[i1] != ','; i1++) {}
        f[nf] = s + i0; fe[nf] = s + i1;
        while (fe[nf] > f[nf] && (fe[nf][-1] == ' ' || fe[nf][-1] == '\t')) fe[nf]--;
        nf++;
        if (i1 == n) break;
        i0 = i1 + 1;
    }
    if (nf < 2 || nf > 3 || (nf == 3 && fe[2] == f[2]))
        return dp__fail(err, DP_ERR_PARSE, "%s:%d: op %d: expected 'comp,comm[,type]', found '%s'", t->name, t->line, i, dp__qnv(q, DP__Q, s, n));
    for (k = 0; k < 2; k++)
        if ((rc = dp__list(t, f[k], fe[k], NULL, vals, &count, err))) return rc;
    if (count != 2) return dp__fail(err, DP_ERR_PARSE, "%s:%d: op %d: expected two integers 'comp,comm'", t->name, t->line, i);
    d->compute = (double)vals[0];
    d->out_bytes = (double)vals[1];
    if (nf == 3 && (size_t)(fe[2] - f[2]) < sizeof kind) {   /* unknown words: opaque */
        memcpy(kind, f[2], (size_t)(fe[2] - f[2]));
        kind[fe[2] - f[2]] = 0;
        dp_kind_parse(kind, &d->kind);
    }
    return 0;
}

/* An op line of the usual form, "comp,comm" (at most 15 digits each,
   then the line's end), read straight from the text, t past it: 1; or 0,
   t as it was, for any other line (the general way reads it). */
static int dp__doppler_op_line(dp__text *t, double *comp, double *comm)
{
    const char *p = t->p, *end = t->end, *q;
    uint64_t v[2];
    unsigned c;
    int k;
    for (k = 0; k < 2; k++) {
        if (k && (p == end || *p++ != ',')) return 0;
        for (q = p, v[k] = 0; p < end && (c = (unsigned)(unsigned char)*p - '0') <= 9; p++) v[k] = 10 * v[k] + c;
        if (p == q || p - q > 15) return 0;
    }
    if (p < end && *p == '\r') p++;
    if (p < end && *p++ != '\n') return 0;
    t->p = p;
    t->line++;
    *comp = (double)v[0];
    *comm = (double)v[1];
    return 1;
}

static int dp__read_doppler(dp_graph *g, dp__text *t, const char *name, dp_error *err)
{
    long long n_total = 0, n_ids = 0, n_src = 0, n_dst = 0, m = 0, first[2];
    const char *s, *src_line = NULL, *dst_line = NULL;
    size_t n, src_len = 0, dst_len = 0;
    char where[300];   /* every edge's place: the target list's line (its ops,
                          named op0, op1, ..., never repeat a name) */
    size_t room;
    int rc = 0, i, line_src = 0, line_dst = 0;
    g->unit_speed = g->unit_bandwidth = 1e10;
    if (!dp__next_content_view(t, &s, &n)) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: empty file (expected the node count)", t->name, t->line > 0 ? t->line : 1); goto done; }
    if ((rc = dp__list(t, s, s + n, NULL, first, &n_total, err))) goto done;
    if (n_total != 1) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: line 1 must hold one node count, found %d numbers", t->name, t->line, (int)n_total); goto done; }
    n_total = first[0];
    if (n_total > (long long)DP_MAX_OPS * 2) { rc = dp__fail(err, DP_ERR_LIMIT, "%s:%d: node count '%lld' exceeds the limit %lld (DP_MAX_OPS ops and as many inputs)", t->name, t->line, n_total, (long long)DP_MAX_OPS * 2); goto done; }
    if (!dp__text_view(t, &s, &n)) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: missing the input-id line", t->name, t->line + 1); goto done; }
    if ((rc = dp__list(t, s, s + n, NULL, NULL, &n_ids, err))) goto done;
    m = n_total - n_ids;
    if (m <= 0) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: %d input ids leave no ops out of %lld nodes", t->name, t->line, (int)n_ids, n_total); goto done; }
    if (m > DP_MAX_OPS) { rc = dp__fail(err, DP_ERR_LIMIT, "%s:%d: %lld ops exceed the limit %d (DP_MAX_OPS)", t->name, t->line, m, DP_MAX_OPS); goto done; }
    g->n_ext_inputs = (int)n_ids;
    /* the edges' sources and targets, straight into the graph's arrays
       (checked below, once the ops are there) */
    if (!dp__text_view(t, &src_line, &src_len)) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: missing the edge-source line", t->name, t->line + 1); goto done; }
    line_src = t->line;
    if ((rc = dp__list(t, src_line, src_line + src_len, &g->src, NULL, &n_src, err))) goto done;
    if (!dp__text_view(t, &dst_line, &dst_len)) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: missing the edge-target line", t->name, t->line + 1); goto done; }
    line_dst = t->line;
    if ((rc = dp__list(t, dst_line, dst_line + dst_len, &g->dst, NULL, &n_dst, err))) goto done;
    if (n_src != n_dst) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: %d edge sources on line %d but %d edge targets on line %d", t->name, line_dst, (int)n_src, line_src, (int)n_dst, line_dst); goto done; }
    /* room for the ops that the rest of the text can hold (4 bytes and
       more a line: a text that claims more is refused below unless it
       has them) */
    room = (size_t)(m < (long long)(t->end - t->p) / 4 + 1 ? m : (long long)(t->end - t->p) / 4 + 1);
    if (dp__graph_reserve(g, room, 0) || DP__GROW(g->bytes, n_src)) {
        rc = dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory making room for %lld ops and %lld edges", t->name, t->line, m, n_src);
        goto done;
    }
    for (i = 0; i < (int)m; i++) {   /* the ops' costs and kinds; then their names (g->n_ops is 0) */
        double comp, comm;
        dp_kind kind = DP_OP_OPAQUE;
        if (!dp__doppler_op_line(t, &comp, &comm)) {   /* not of the usual form: the general way */
            dp_op_desc d;
            memset(&d, 0, sizeof d);
            if (!dp__next_content_view(t, &s, &n)) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: expected %lld op lines 'comp,comm', found %d", t->name, t->line, m, i); goto done; }
            if ((rc = dp__doppler_op(t, s, n, i, &d, err))) goto done;
            comp = d.compute; comm = d.out_bytes; kind = d.kind;
        }
        if (!room && dp__graph_reserve(g, (size_t)i + (room = (size_t)(i < m - i ? i : m - i)), 0)) goto nomem;   /* more than the text promised: twice */
        room--;
        DP__PUT_Z(g->kind, kind, !kind);
        DP__PUT_Z(g->compute, comp, dp__zero_bits(comp));
        DP__PUT_Z(g->out_bytes, comm, dp__zero_bits(comm));
    }
    if (dp__graph_plain_ops(g, (int)m)) goto nomem;
    g->dp__numbered = 1;   /* ops op0 .. op<m-1>: a name is its number, not indexed */
    if (dp__next_content_view(t, &s, &n)) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: unexpected line after the %lld op lines: '%.*s'", t->name, t->line, m, (int)(n < 40 ? n : 40), s); goto done; }
    /* each edge checked as dp__graph_push_edge checks it: its ends are
       ops (the lists hold no negative numbers, fewer than DP_MAX_EDGES
       of them) and its bytes are its source's output bytes, checked with
       the op; what is left is a self loop */
    for (i = 0; i < (int)n_src; i++) {
        int a = g->src[i], b = g->dst[i];
        if (a >= m) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: edge %d: source %lld is not an op (0..%lld)", t->name, line_src, i, dp__list_at(src_line, src_line + src_len, i), m - 1); goto done; }
        if (b >= m) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: edge %d: target %lld is not an op (0..%lld)", t->name, line_dst, i, dp__list_at(dst_line, dst_line + dst_len, i), m - 1); goto done; }
        if (a == b && (rc = dp__edge_check(g, a, b, g->out_bytes[a], err))) { dp__at(err, rc, t->name, line_dst); goto done; }
        DP__PUT_Z(g->bytes, g->out_bytes[a], dp__zero_bits(g->out_bytes[a]));
        g->n_edges++;
    }
    goto done;
nomem:
    rc = dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory adding the ops (%lld)", t->name, t->line, m);
done:
    snprintf(where, sizeof where, "%s:%d", t->name, line_dst);
    return dp__read_finish(g, t, rc, name, dp__same_where, where, err);
}

static int dp__integral(double v) { return v >= 0 && v <= 9007199254740992.0 && v == floor(v); }

/* DP_ERR_FORMAT when g holds resident bytes, weights or source names,
   which format fmt cannot carry (only the native one can). */
static int dp__no_resident(const dp_graph *g, const char *fmt, dp_error *err)
{
    int i;
    for (i = 0; i < g->n_ops; i++)
        if (g->n_source[i])
            return dp__fail(err, DP_ERR_FORMAT, "op '%s' has source names ('%.100s'...); the %s format has none (write the native format)", g->name[i], g->source[i], fmt);
    if (g->n_uses > 0)
        return dp__fail(err, DP_ERR_FORMAT, "op '%s' uses weight '%s'; the %s format has no weights (write the native format)",
                        g->name[g->use_op[0]], g->weight_name[g->use_weight[0]], fmt);
    for (i = 0; i < g->n_ops; i++)
        if (g->resident[i] != 0)
            return dp__fail(err, DP_ERR_FORMAT, "op '%s' holds %.17g resident bytes; the %s format has no resident memory (write the native format)", g->name[i], g->resident[i], fmt);
    return 0;
}

static int dp__write_doppler(const dp_graph *g, FILE *f, dp_error *err)
{
    int i, rc;
    if (g->n_dev_time) return dp__fail(err, DP_ERR_FORMAT, "the DOPPLER format has no per-device times (graph has %d columns)", g->n_dev_time);
    if ((rc = dp__no_resident(g, "DOPPLER", err))) return rc;
    for (i = 0; i < g->n_ops; i++)
        if (!dp__integral(g->compute[i]) || !dp__integral(g->out_bytes[i]))
            return dp__fail(err, DP_ERR_FORMAT, "op '%s': DOPPLER format needs integer costs, found compute %.17g, bytes %.17g", g->name[i], g->compute[i], g->out_bytes[i]);
    for (i = 0; i < g->n_edges; i++)
        if (g->bytes[i] != g->out_bytes[g->src[i]])
            return dp__fail(err, DP_ERR_FORMAT, "edge %s -> %s: DOPPLER format sends the source's %.17g bytes on every edge, not %.17g", g->name[g->src[i]], g->name[g->dst[i]], g->out_bytes[g->src[i]], g->bytes[i]);
    fprintf(f, "%d\n", g->n_ops + g->n_ext_inputs);
    for (i = 0; i < g->n_ext_inputs; i++) fprintf(f, "%d, ", i);
    fputc('\n', f);
    for (i = 0; i < g->n_edges; i++) fprintf(f, "%d, ", g->src[i]);
    fputc('\n', f);
    for (i = 0; i < g->n_edges; i++) fprintf(f, "%d, ", g->dst[i]);
    fputc('\n', f);
    for (i = 0; i < g->n_ops; i++) {
        fprintf(f, "%.0f,%.0f", g->compute[i], g->out_bytes[i]);
        if (g->kind[i] != DP_OP_OPAQUE) fprintf(f, ",%s", dp_kind_name(g->kind[i]));
        fputc('\n', f);
    }
    return 0;
}

/* ---- STG ---------------------------------------------------------------- */
/* Token stream over lines, '#' comments removed, with line numbers. */
typedef struct dp__tokens { dp__text *t; char *p; } dp__tokens;

static const char *dp__token(dp__tokens *k, int *line)
{
    for (;;) {
        char *s;
        if (k->p) {
            while (*k->p == ' ' || *k->p == '\t') k->p++;
            if (*k->p) {
                s = k->p;
                while (*k->p && *k->p != ' ' && *k->p != '\t') k->p++;
                if (*k->p) *k->p++ = 0;
                *line = k->t->line;
                return s;
            }
        }
        if (dp__text_line(k->t, 1) <= 0) return NULL;
        k->p = k->t->buf;
    }
}

/* Where edge i of an STG file was read: the line of its predecessor (its
   ops, named t0, t1, ..., never repeat a name). */
typedef struct dp__lines_where { const char *file; const int *line; } dp__lines_where;

static void dp__lines_where_fn(const void *ctx, int edge, int i, char *buf, size_t cap)
{
    const dp__lines_where *w = (const dp__lines_where *)ctx;
    if (edge) snprintf(buf, cap, "%s:%d", w->file, w->line[i]);
    else snprintf(buf, cap, "%s", w->file);
}

static int dp__read_stg(dp_graph *g, dp__text *t, const char *name, dp_error *err)
{
    dp__tokens k;
    dp__lines_where where;
    const char *s;
    char q[DP__Q];
    long long n = 0, v;
    int line = 1, rc = 0, i, j, *esrc = NULL, *edst = NULL, *eline = NULL;
    k.t = t; k.p = NULL;
    if (!(s = dp__token(&k, &line))) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: empty file (expected the task count)", t->name, t->line > 0 ? t->line : 1); goto done; }
    if (dp__int(s, 1, LLONG_MAX, &n)) { rc = dp__fail(err, DP_ERR_RANGE, "%s:%d: task count '%s' is not a positive integer", t->name, line, dp__q(q, s)); goto done; }
    if (n > DP_MAX_OPS - 2) { rc = dp__fail(err, DP_ERR_LIMIT, "%s:%d: task count '%s' exceeds the limit %d (DP_MAX_OPS with the entry and exit tasks)", t->name, line, dp__q(q, s), DP_MAX_OPS - 2); goto done; }
    for (i = 0; i < (int)n + 2; i++) {
        dp_op_desc d;
        char nm[32];
        long long np;
        memset(&d, 0, sizeof d);
        if (!(s = dp__token(&k, &line))) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: expected %lld task rows, found %d", t->name, t->line, n + 2, i); goto done; }
        if (dp__int(s, 0, LLONG_MAX, &v) || v != i) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: expected task id %d, found '%s'", t->name, line, i, dp__q(q, s)); goto done; }
        if (!(s = dp__token(&k, &line))) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: task %d has no cost", t->name, t->line, i); goto done; }
        if ((rc = dp__num(s, &d.compute, 0)) != 0) { rc = dp__fail(err, dp__num_code(rc), "%s:%d: task %d: cost '%s' %s", t->name, line, i, dp__q(q, s), dp__num_problem(rc)); goto done; }
        if (!(s = dp__token(&k, &line))) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: task %d has no predecessor count", t->name, t->line, i); goto done; }
        if (dp__int(s, 0, n + 1, &np)) { rc = dp__fail(err, DP_ERR_RANGE, "%s:%d: task %d: predecessor count '%s' not in 0..%lld", t->name, line, i, dp__q(q, s), n + 1); goto done; }
        for (j = 0; j < (int)np; j++) {
            if (!(s = dp__token(&k, &line))) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: task %d lists %lld predecessors, found %d", t->name, t->line, i, np, j); goto done; }
            if (dp__int(s, 0, n + 1, &v)) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: task %d: predecessor '%s' is not a task (0..%lld)", t->name, line, i, dp__q(q, s), n + 1); goto done; }
            if (DP__PUSH(esrc, (int)v) || DP__PUSH(edst, i) || DP__PUSH(eline, line)) { rc = dp__fail(err, DP_ERR_NOMEM, "%s:%d: out of memory reading the predecessors of task %d", t->name, line, i); goto done; }
        }
        dp__num_name(nm, "t", i);
        d.name = nm;
        if ((rc = dp__graph_push_op(g, &d, NULL, err))) { dp__at(err, rc, t->name, line); goto done; }
    }
    if ((s = dp__token(&k, &line))) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: unexpected '%s' after the %lld task rows", t->name, line, dp__q(q, s), n + 2); goto done; }
    for (i = 0; i < (int)DP__LEN(esrc); i++)
        if ((rc = dp__graph_push_edge(g, esrc[i], edst[i], 0.0, err))) { dp__at(err, rc, t->name, eline[i]); goto done; }
done:
    where.file = t->name; where.line = eline;
    rc = dp__read_finish(g, t, rc, name, dp__lines_where_fn, &where, err);
    DP__ARRFREE(esrc); DP__ARRFREE(edst); DP__ARRFREE(eline);
    return rc;
}

static int dp__write_stg(const dp_graph *g, FILE *f, dp_error *err)
{
    /* STG has a zero-cost entry task 0 and exit task n+1. A graph that has
       them already (op 0 the only source, the last op the only sink, both
       cost 0) is written as is; otherwise they are added around it. */
    int i, k, n = g->n_ops, shaped, sources = 0, sinks = 0, off;
    if (g->n_dev_time) return dp__fail(err, DP_ERR_FORMAT, "the STG format has no per-device times (graph has %d columns)", g->n_dev_time);
    if ((k = dp__no_resident(g, "STG", err))) return k;
    for (i = 0; i < g->n_edges; i++)
        if (g->bytes[i] != 0) return dp__fail(err, DP_ERR_FORMAT, "edge %s -> %s carries %.17g bytes; the STG format has no communication", g->name[g->src[i]], g->name[g->dst[i]], g->bytes[i]);
    for (i = 0; i < n; i++) {
        sources += g->in_off[i + 1] == g->in_off[i];
        sinks += g->out_off[i + 1] == g->out_off[i];
    }
    shaped = n >= 2 && g->compute[0] == 0 && g->compute[n - 1] == 0 && sources == 1 && sinks == 1 &&
             g->in_off[1] == g->in_off[0] && g->out_off[n] == g->out_off[n - 1];
    off = shaped ? 0 : 1;
    fprintf(f, "%d\n", shaped ? n - 2 : n);
    if (!shaped) fprintf(f, "0 0 0\n");
    for (i = 0; i < n; i++) {
        int np = g->in_off[i + 1] - g->in_off[i];
        fprintf(f, "%d %.17g %d", i + off, g->compute[i], np || shaped ? np : 1);
        if (!np && !shaped) fprintf(f, " 0");
        for (k = g->in_off[i]; k < g->in_off[i + 1]; k++) fprintf(f, " %d", g->src[g->in_edge[k]] + off);
        fputc('\n', f);
    }
    if (!shaped) {
        fprintf(f, "%d 0 %d", n + 1, sinks);
        for (i = 0; i < n; i++) if (g->out_off[i + 1] == g->out_off[i]) fprintf(f, " %d", i + 1);
        fputc('\n', f);
    }
    return 0;
}

/* ---- binary (.dpb) -----------------------------------------------------
   The layout is documented in >>api-formats. Every number is little-endian
   and read byte by byte (dp__le32, dp__le64); nothing is read before the
   header, the section table and each section's bounds, size and checksum
   are checked against the file, and every value is checked as the text
   readers check it before it goes into the graph. */
#define DP__DPB_VERSION  1
#define DP__DPB_HEADER   80   /* the fixed header; the section table follows */

enum { DP__S_NAME, DP__S_KIND, DP__S_COMPUTE, DP__S_OUT, DP__S_MEM, DP__S_RESIDENT, DP__S_ROWS, DP__S_COLS,
       DP__S_ARG, DP__S_DEVTIME, DP__S_NSOURCE, DP__S_SOURCE, DP__S_SRC, DP__S_DST, DP__S_BYTES,
       DP__S_WNAME, DP__S_WBYTES, DP__S_USEOP, DP__S_USEWT, DP__S_COUNT };

/* Each section's tag (8 bytes in the table, NUL-padded), its element size
   (0: NUL-terminated strings), what counts its elements and whether it
   may be empty when every value is zero. */
enum { DP__C_OPS, DP__C_OPTIMES, DP__C_EDGES, DP__C_WEIGHTS, DP__C_USES, DP__C_STRINGS };
static const struct { char tag[9]; int size, count, zero; } dp__dpb_sec[DP__S_COUNT] = {
    { "opname", 0, DP__C_OPS, 0 },      { "opkind", 1, DP__C_OPS, 1 },      { "compute", 8, DP__C_OPS, 1 },
    { "outbytes", 8, DP__C_OPS, 1 },    { "mem", 8, DP__C_OPS, 1 },         { "resident", 8, DP__C_OPS, 1 },
    { "rows", 4, DP__C_OPS, 1 },        { "cols", 4, DP__C_OPS, 1 },        { "arg", 4, DP__C_OPS, 1 },
    { "devtime", 8, DP__C_OPTIMES, 0 }, { "nsource", 4, DP__C_OPS, 1 },     { "source", 0, DP__C_STRINGS, 0 },
    { "src", 4, DP__C_EDGES, 0 },       { "dst", 4, DP__C_EDGES, 0 },       { "bytes", 8, DP__C_EDGES, 1 },
    { "wname", 0, DP__C_WEIGHTS, 0 },   { "wbytes", 8, DP__C_WEIGHTS, 1 },  { "useop", 4, DP__C_USES, 0 },
    { "usewt", 4, DP__C_USES, 0 } };

static double dp__lef64(const unsigned char *p)
{
    uint64_t u = dp__le64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void dp__put32(unsigned char *p, uint32_t v) { int i; for (i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i); }
static void dp__put64(unsigned char *p, uint64_t v) { int i; for (i = 0; i < 8; i++) p[i] = (unsigned char)(v >> 8 * i); }

/* The .dpb checksum of a stream of bytes (see >>api-formats), fed in
   pieces whose lengths are multiples of 8, but for the last. */
typedef struct dp__sum { uint64_t h, n; } dp__sum;

static void dp__sum_init(dp__sum *s) { s->h = 0x9e3779b97f4a7c15ULL; s->n = 0; }

static void dp__sum_add(dp__sum *s, const unsigned char *p, size_t n)
{
    uint64_t h = s->h;
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) { h = (h ^ dp__le64(p + i)) * 0xbf58476d1ce4e5b9ULL; h ^= h >> 31; }
    if (i < n) {   /* the last word, padded with zeros */
        unsigned char w[8] = { 0 };
        memcpy(w, p + i, n - i);
        h = (h ^ dp__le64(w)) * 0xbf58476d1ce4e5b9ULL; h ^= h >> 31;
    }
    s->h = h;
    s->n += n;
}

static uint64_t dp__sum_end(const dp__sum *s) { return dp__mix(s->h ^ s->n); }

/* ---- writing: each section is made twice, once to learn its size and
   checksum (they come first, in the table), once to write it ---------- */
typedef struct dp__dpb_out {
    FILE *f;                  /* NULL: the first pass, nothing written       */
    dp__sum sum;              /* the current section's                       */
    unsigned char buf[4096];  /* bytes not yet summed and written: flushed
                                 when full (a multiple of 8, so that the
                                 checksum's words are the section's) and at
                                 the section's end (dp__out_flush)          */
    size_t k;
} dp__dpb_out;

static void dp__out_flush(dp__dpb_out *o)
{
    dp__sum_add(&o->sum, o->buf, o->k);
    if (o->f) fwrite(o->buf, 1, o->k, o->f);
    o->k = 0;
}

static void dp__out_bytes(dp__dpb_out *o, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    while (n > 0) {
        size_t c = sizeof o->buf - o->k < n ? sizeof o->buf - o->k : n;
        memcpy(o->buf + o->k, b, c);
        o->k += c; b += c; n -= c;
        if (o->k == sizeof o->buf) dp__out_flush(o);
    }
}

static void dp__out_u32(dp__dpb_out *o, uint32_t v)
{
    unsigned char b[4];
    dp__put32(b, v);
    dp__out_bytes(o, b, 4);
}

static void dp__out_f64(dp__dpb_out *o, double v)
{
    unsigned char b[8];
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    dp__put64(b, u);
    dp__out_bytes(o, b, 8);
}

/* The f64 array v[0..n), or nothing when every value is +0.0 (a section
   of 0 bytes reads as zeros). */
static void dp__out_f64s(dp__dpb_out *o, const double *v, size_t n)
{
    size_t i;
    uint64_t any = 0;
    for (i = 0; i < n; i++) { uint64_t u; memcpy(&u, &v[i], sizeof u); any |= u; }
    for (i = 0; any && i < n; i++) dp__out_f64(o, v[i]);
}

static void dp__out_i32s(dp__dpb_out *o, const int *v, size_t n)
{
    size_t i;
    int any = 0;
    for (i = 0; i < n; i++) any |= v[i];
    for (i = 0; any && i < n; i++) dp__out_u32(o, (uint32_t)v[i]);
}

/* Section sec of g through o. */
static void dp__dpb_section(dp__dpb_out *o, const dp_graph *g, int sec)
{
    size_t n = (size_t)g->n_ops, i;
    int k;
    switch (sec) {
    case DP__S_NAME:
        for (i = 0; i < n; i++) dp__out_bytes(o, g->name[i], strlen(g->name[i]) + 1);
        break;
    case DP__S_KIND:   /* every op opaque (kind 0): nothing */
        for (i = 0, k = 0; i < n; i++) k |= g->kind[i] != DP_OP_OPAQUE;
        for (i = 0; k && i < n; i++) { unsigned char b = (unsigned char)g->kind[i]; dp__out_bytes(o, &b, 1); }
        break;
    case DP__S_COMPUTE:  dp__out_f64s(o, g->compute, n); break;
    case DP__S_OUT:      dp__out_f64s(o, g->out_bytes, n); break;
    case DP__S_MEM:      dp__out_f64s(o, g->mem_bytes, n); break;
    case DP__S_RESIDENT: dp__out_f64s(o, g->resident, n); break;
    case DP__S_ROWS:     dp__out_i32s(o, g->rows, n); break;
    case DP__S_COLS:     dp__out_i32s(o, g->cols, n); break;
    case DP__S_ARG:      dp__out_i32s(o, g->arg, n); break;
    case DP__S_DEVTIME:  for (i = 0; i < n * (size_t)g->n_dev_time; i++) dp__out_f64(o, g->dev_time[i]); break;
    case DP__S_NSOURCE:  dp__out_i32s(o, g->n_source, n); break;
    case DP__S_SOURCE:
        for (i = 0; i < n; i++) {
            const char *s = g->source[i];
            for (k = 0; k < g->n_source[i]; k++) { size_t l = strlen(s) + 1; dp__out_bytes(o, s, l); s += l; }
        }
        break;
    case DP__S_SRC:      for (k = 0; k < g->n_edges; k++) dp__out_u32(o, (uint32_t)g->src[k]); break;
    case DP__S_DST:      for (k = 0; k < g->n_edges; k++) dp__out_u32(o, (uint32_t)g->dst[k]); break;
    case DP__S_BYTES:    dp__out_f64s(o, g->bytes, (size_t)g->n_edges); break;
    case DP__S_WNAME:
        for (k = 0; k < g->n_weights; k++) dp__out_bytes(o, g->weight_name[k], strlen(g->weight_name[k]) + 1);
        break;
    case DP__S_WBYTES:   dp__out_f64s(o, g->weight_bytes, (size_t)g->n_weights); break;
    case DP__S_USEOP:    for (k = 0; k < g->n_uses; k++) dp__out_u32(o, (uint32_t)g->use_op[k]); break;
    case DP__S_USEWT:    for (k = 0; k < g->n_uses; k++) dp__out_u32(o, (uint32_t)g->use_weight[k]); break;
    }
}

static int dp__write_dpb(const dp_graph *g, FILE *f, dp_error *err)
{
    static const unsigned char zeros[8] = { 0 };
    unsigned char head[DP__DPB_HEADER + 32 * DP__S_COUNT];
    uint64_t off = sizeof head, u;
    dp__dpb_out out, *o = &out;
    dp__sum hs;
    int s;
    memset(head, 0, sizeof head);
    memcpy(head, DP__DPB_MAGIC, 8);
    dp__put32(head + 8, DP__DPB_VERSION);
    dp__put32(head + 12, DP__S_COUNT);
    dp__put32(head + 24, (uint32_t)g->n_ops);
    dp__put32(head + 28, (uint32_t)g->n_edges);
    dp__put32(head + 32, (uint32_t)g->n_weights);
    dp__put32(head + 36, (uint32_t)g->n_uses);
    dp__put32(head + 40, (uint32_t)g->n_dev_time);
    dp__put32(head + 44, (uint32_t)g->n_ext_inputs);
    memcpy(&u, &g->unit_speed, 8); dp__put64(head + 48, u);
    memcpy(&u, &g->unit_bandwidth, 8); dp__put64(head + 56, u);
    for (s = 0; s < DP__S_COUNT; s++) {   /* first pass: sizes and checksums */
        unsigned char *e = head + DP__DPB_HEADER + 32 * s;
        o->f = NULL; o->k = 0;
        dp__sum_init(&o->sum);
        dp__dpb_section(o, g, s);
        dp__out_flush(o);
        memcpy(e, dp__dpb_sec[s].tag, strlen(dp__dpb_sec[s].tag));
        dp__put64(e + 8, off);
        dp__put64(e + 16, o->sum.n);
        dp__put64(e + 24, dp__sum_end(&o->sum));
        off += (o->sum.n + 7) & ~(uint64_t)7;
    }
    dp__put64(head + 16, off);
    dp__sum_init(&hs);
    dp__sum_add(&hs, head, 72);
    dp__sum_add(&hs, head + DP__DPB_HEADER, 32 * DP__S_COUNT);
    dp__put64(head + 72, dp__sum_end(&hs));
    fwrite(head, 1, sizeof head, f);
    for (s = 0; s < DP__S_COUNT; s++) {   /* second pass: the sections */
        o->f = f; o->k = 0;
        dp__sum_init(&o->sum);
        dp__dpb_section(o, g, s);
        dp__out_flush(o);
        fwrite(zeros, 1, (size_t)(((o->sum.n + 7) & ~(uint64_t)7) - o->sum.n), f);
    }
    return ferror(f) ? dp__fail(err, DP_ERR_IO, "write error") : 0;
}

/* ---- reading ------------------------------------------------------------ */
typedef struct dp__dpb {
    const unsigned char *p;      /* the file, len bytes                   */
    size_t len;
    const char *name;            /* its name, for messages                */
    uint64_t off[DP__S_COUNT], bytes[DP__S_COUNT];
    uint32_t ops, edges, weights, uses, devtimes, ext;
} dp__dpb;

/* "NAME: offset O (section 'TAG', WHAT I)", where a message's value is */
static const char *dp__dpb_where(const dp__dpb *r, int s, uint64_t off, const char *what, size_t i, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.200s: offset %llu (section '%s', %s %zu)", r->name, (unsigned long long)off, dp__dpb_sec[s].tag, what, i);
    return buf;
}

/* The offset of element i of fixed-size section s. */
static uint64_t dp__dpb_off(const dp__dpb *r, int s, size_t i) { return r->off[s] + (uint64_t)i * (uint64_t)dp__dpb_sec[s].size; }

/* Element i of fixed-size section s (0 when the section is empty). */
static double dp__dpb_f64(const dp__dpb *r, int s, size_t i) { return r->bytes[s] ? dp__lef64(r->p + dp__dpb_off(r, s, i)) : 0.0; }
static int dp__dpb_i32(const dp__dpb *r, int s, size_t i) { return r->bytes[s] ? (int)(int32_t)dp__le32(r->p + dp__dpb_off(r, s, i)) : 0; }

/* Value v, element e of section s (of item i: "op", "edge", "weight",
   named name, or NULL), is a cost (what: "compute cost", "bytes", ...):
   finite and >= 0 (any sign with sign), as the text readers want theirs. */
static int dp__dpb_cost(const dp__dpb *r, int s, size_t e, const char *item, size_t i, const char *name, const char *what,
                        double v, int sign, dp_error *err)
{
    char at[400], q[DP__Q];
    if (v != v || v == HUGE_VAL || v == -HUGE_VAL || (!sign && v < 0))
        return dp__fail(err, DP_ERR_RANGE, "%s: %s%s%s%s%s '%.17g' is %s", dp__dpb_where(r, s, dp__dpb_off(r, s, e), item, i, at, sizeof at),
                        name ? item : "", name ? " '" : "", name ? dp__q(q, name) : "", name ? "': " : "", what, v,
                        v < 0 && v > -HUGE_VAL ? "negative" : "not finite");
    return 0;
}

/* The NUL-terminated string at *pos of string section s (advanced past
   it), or NULL when the section ends first. */
static const char *dp__dpb_string(const dp__dpb *r, int s, uint64_t *pos)
{
    const char *b = (const char *)r->p + r->off[s] + *pos, *z;
    if (*pos >= r->bytes[s]) return NULL;
    z = (const char *)memchr(b, 0, (size_t)(r->bytes[s] - *pos));
    if (!z) return NULL;
    *pos += (uint64_t)(z - b) + 1;
    return b;
}

/* The header and the section table, checked against the file; then
   every section's checksum. */
static int dp__dpb_header(dp__dpb *r, dp_error *err)
{
    const unsigned char *p = r->p;
    const char *nm = r->name;
    uint64_t end = DP__DPB_HEADER + 32 * DP__S_COUNT, size;
    dp__sum hs;
    double sp, bw;
    uint32_t v;
    int s;
    if (!dp__is_dpb((const char *)p, r->len))
        return dp__fail(err, DP_ERR_PARSE, "%s: not a .dpb file (it does not open with the bytes 89 44 50 42 0D 0A 1A 0A)", nm);
    if (r->len < end)
        return dp__fail(err, DP_ERR_PARSE, "%s: truncated: %zu bytes, fewer than the header and section table's %llu", nm, r->len, (unsigned long long)end);
    if ((v = dp__le32(p + 8)) != DP__DPB_VERSION)
        return dp__fail(err, DP_ERR_PARSE, "%s: offset 8: version %u (this reader knows %d)", nm, v, DP__DPB_VERSION);
    if ((v = dp__le32(p + 12)) != DP__S_COUNT)
        return dp__fail(err, DP_ERR_PARSE, "%s: offset 12: %u sections (version %d has %d)", nm, v, DP__DPB_VERSION, DP__S_COUNT);
    if ((size = dp__le64(p + 16)) != r->len)
        return dp__fail(err, DP_ERR_PARSE, "%s: offset 16: the header says %llu bytes, the file has %zu (%s)", nm,
                        (unsigned long long)size, r->len, size > r->len ? "truncated" : "bytes added or the header corrupted");
    dp__sum_init(&hs);
    dp__sum_add(&hs, p, 72);
    dp__sum_add(&hs, p + DP__DPB_HEADER, 32 * DP__S_COUNT);
    if (dp__sum_end(&hs) != dp__le64(p + 72))
        return dp__fail(err, DP_ERR_PARSE, "%s: offset 72: header checksum %016llx, but the header and section table sum to %016llx (corrupted)",
                        nm, (unsigned long long)dp__le64(p + 72), (unsigned long long)dp__sum_end(&hs));
    if (dp__le64(p + 64) != 0)
        return dp__fail(err, DP_ERR_PARSE, "%s: offset 64: reserved field %llu, not 0", nm, (unsigned long long)dp__le64(p + 64));
    r->ops = dp__le32(p + 24); r->edges = dp__le32(p + 28); r->weights = dp__le32(p + 32);
    r->uses = dp__le32(p + 36); r->devtimes = dp__le32(p + 40); r->ext = dp__le32(p + 44);
    if (r->ops == 0) return dp__fail(err, DP_ERR_GRAPH, "%s: offset 24: no ops", nm);
    {
        static const struct { int off; const char *what; uint32_t lim; const char *name; } lim[6] = {
            { 24, "ops", DP_MAX_OPS, "DP_MAX_OPS" }, { 28, "edges", DP_MAX_EDGES, "DP_MAX_EDGES" },
            { 32, "weights", DP_MAX_OPS, "DP_MAX_OPS" }, { 36, "weight uses", DP_MAX_EDGES, "DP_MAX_EDGES" },
            { 40, "per-device time columns", DP_MAX_DEVICES, "DP_MAX_DEVICES" }, { 44, "external inputs", DP_MAX_OPS, "DP_MAX_OPS" } };
        for (s = 0; s < 6; s++)
            if ((v = dp__le32(p + lim[s].off)) > lim[s].lim)
                return dp__fail(err, DP_ERR_LIMIT, "%s: offset %d: %u %s exceed the limit %u (%s)", nm, lim[s].off, v, lim[s].what, lim[s].lim, lim[s].name);
    }
    sp = dp__lef64(p + 48); bw = dp__lef64(p + 56);
    if (!(sp > 0 && sp < HUGE_VAL)) return dp__fail(err, DP_ERR_RANGE, "%s: offset 48: units speed '%.17g' must be a positive number", nm, sp);
    if (!(bw > 0 && bw < HUGE_VAL)) return dp__fail(err, DP_ERR_RANGE, "%s: offset 56: units bandwidth '%.17g' must be a positive number", nm, bw);
    for (s = 0; s < DP__S_COUNT; s++) {
        const unsigned char *e = p + DP__DPB_HEADER + 32 * s;
        const char *tag = dp__dpb_sec[s].tag;
        uint64_t off = dp__le64(e + 8), bytes = dp__le64(e + 16), count = 0, want;
        unsigned eo = DP__DPB_HEADER + 32 * (unsigned)s;
        char found[9] = { 0 };
        dp__sum sum;
        memcpy(found, e, 8);
        if (memcmp(found, tag, 8) != 0 && !(strlen(tag) < 8 && strcmp(found, tag) == 0 && !memcmp(found + strlen(tag), "\0\0\0\0\0\0\0\0", 8 - strlen(tag))))
            return dp__fail(err, DP_ERR_PARSE, "%s: offset %u: section %d is tagged '%s', expected '%s'", nm, eo, s, found, tag);
        if (off % 8 != 0 || off < end || off > r->len || bytes > r->len - off)
            return dp__fail(err, DP_ERR_PARSE, "%s: offset %u: section '%s' at offset %llu, %llu bytes: %s", nm, eo + 8, tag,
                            (unsigned long long)off, (unsigned long long)bytes,
                            off % 8 ? "not a multiple of 8" : off < end ? "overlaps the header or the section before it" : "past the end of the file");
        switch (dp__dpb_sec[s].count) {
        case DP__C_OPS:     count = r->ops; break;
        case DP__C_OPTIMES: count = (uint64_t)r->ops * r->devtimes; break;
        case DP__C_EDGES:   count = r->edges; break;
        case DP__C_WEIGHTS: count = r->weights; break;
        case DP__C_USES:    count = r->uses; break;
        default:            break;   /* strings: counted as they are read */
        }
        want = count * (uint64_t)dp__dpb_sec[s].size;
        if (dp__dpb_sec[s].size && bytes != want && (bytes != 0 || !dp__dpb_sec[s].zero))
            return dp__fail(err, DP_ERR_PARSE, "%s: offset %u: section '%s' holds %llu bytes, but its %llu values take %llu%s", nm, eo + 16,
                            tag, (unsigned long long)bytes, (unsigned long long)count, (unsigned long long)want,
                            dp__dpb_sec[s].zero ? " (or 0: all zero)" : "");
        dp__sum_init(&sum);
        dp__sum_add(&sum, p + off, (size_t)bytes);
        if (dp__sum_end(&sum) != dp__le64(e + 24))
            return dp__fail(err, DP_ERR_PARSE, "%s: offset %u: section '%s' (%llu bytes at offset %llu) sums to %016llx, the table says %016llx (corrupted)",
                            nm, eo + 24, tag, (unsigned long long)bytes, (unsigned long long)off,
                            (unsigned long long)dp__sum_end(&sum), (unsigned long long)dp__le64(e + 24));
        r->off[s] = off; r->bytes[s] = bytes;
        end = off + bytes;
    }
    /* names take 2 bytes or more: the counts are what the file can hold
       before anything is sized by them */
    if (r->bytes[DP__S_NAME] / 2 < r->ops || r->bytes[DP__S_WNAME] / 2 < r->weights)
        return dp__fail(err, DP_ERR_PARSE, "%s: section '%s' holds %llu bytes, too few for %u names", nm,
                        r->bytes[DP__S_NAME] / 2 < r->ops ? "opname" : "wname",
                        (unsigned long long)r->bytes[r->bytes[DP__S_NAME] / 2 < r->ops ? DP__S_NAME : DP__S_WNAME],
                        r->bytes[DP__S_NAME] / 2 < r->ops ? r->ops : r->weights);
    return 0;
}

/* Where op or edge i of a .dpb file is: its name's place, its source's. */
static void dp__dpb_place(const void *ctx, int edge, int i, char *buf, size_t cap)
{
    const dp__dpb *r = (const dp__dpb *)ctx;
    uint64_t pos = 0;
    int k;
    if (edge) { dp__dpb_where(r, DP__S_SRC, dp__dpb_off(r, DP__S_SRC, (size_t)i), "edge", (size_t)i, buf, cap); return; }
    for (k = 0; k < i; k++) dp__dpb_string(r, DP__S_NAME, &pos);
    dp__dpb_where(r, DP__S_NAME, r->off[DP__S_NAME] + pos, "op", (size_t)i, buf, cap);
}

/* A failure of the graph builder at item i of section s (the offset of
   its entry pos): prefixed with that place. */
static int dp__dpb_at(const dp__dpb *r, int rc, int s, uint64_t pos, const char *item, size_t i, dp_error *err)
{
    char at[400], pre[404];
    if (err) {
        snprintf(pre, sizeof pre, "%s: ", dp__dpb_where(r, s, r->off[s] + pos, item, i, at, sizeof at));
        dp__prefix(err, pre);
    }
    return rc;
}

/* Op i: its fields checked where they are, then added by dp_graph_add_op
   (which checks its name). name: its name, at *pos of 'opname'; srcs:
   room for its source names; times: for its per-device times. */
static int dp__dpb_op(const dp__dpb *r, dp_graph *g, size_t i, uint64_t *pos, uint64_t *spos, const char ***srcs, size_t *room,
                      double *times, dp_error *err)
{
    static const struct { int s; const char *what; } cost[4] = {
        { DP__S_COMPUTE, "compute cost" }, { DP__S_OUT, "bytes" }, { DP__S_MEM, "mem" }, { DP__S_RESIDENT, "resident" } };
    double *val[4];
    char at[400], q[DP__Q];
    uint64_t name_at = *pos;
    dp_op_desc d;
    int k, rc;
    memset(&d, 0, sizeof d);
    if (!(d.name = dp__dpb_string(r, DP__S_NAME, pos)))
        return dp__fail(err, DP_ERR_PARSE, "%s: section 'opname' (%llu bytes) ends before op %zu's name (%u ops)", r->name,
                        (unsigned long long)r->bytes[DP__S_NAME], i, r->ops);
    if ((k = r->bytes[DP__S_KIND] ? r->p[dp__dpb_off(r, DP__S_KIND, i)] : 0) >= DP_KIND__COUNT)
        return dp__fail(err, DP_ERR_RANGE, "%s: op '%s': kind %d is not a kind (0..%d)",
                        dp__dpb_where(r, DP__S_KIND, dp__dpb_off(r, DP__S_KIND, i), "op", i, at, sizeof at), dp__q(q, d.name), k, DP_KIND__COUNT - 1);
    d.kind = (dp_kind)k;
    val[0] = &d.compute; val[1] = &d.out_bytes; val[2] = &d.mem_bytes; val[3] = &d.resident;
    for (k = 0; k < 4; k++)
        if ((rc = dp__dpb_cost(r, cost[k].s, i, "op", i, d.name, cost[k].what, *val[k] = dp__dpb_f64(r, cost[k].s, i), 0, err))) return rc;
    d.rows = dp__dpb_i32(r, DP__S_ROWS, i);
    d.cols = dp__dpb_i32(r, DP__S_COLS, i);
    d.arg = dp__dpb_i32(r, DP__S_ARG, i);
    if (!dp__shape_ok(d.rows, d.cols))
        return dp__fail(err, DP_ERR_RANGE, "%s: op '%s': shape %dx%d out of range (both 0, or 1..2^20 with at most 2^28 elements)",
                        dp__dpb_where(r, DP__S_ROWS, dp__dpb_off(r, DP__S_ROWS, i), "op", i, at, sizeof at), dp__q(q, d.name), d.rows, d.cols);
    if (d.arg < 0)
        return dp__fail(err, DP_ERR_RANGE, "%s: op '%s': arg %d is negative", dp__dpb_where(r, DP__S_ARG, dp__dpb_off(r, DP__S_ARG, i), "op", i, at, sizeof at), dp__q(q, d.name), d.arg);
    for (k = 0; k < (int)r->devtimes; k++) {
        char what[32];
        snprintf(what, sizeof what, "time on device %d", k);
        if ((rc = dp__dpb_cost(r, DP__S_DEVTIME, i * r->devtimes + (size_t)k, "op", i, d.name, what,
                               times[k] = dp__dpb_f64(r, DP__S_DEVTIME, i * r->devtimes + (size_t)k), 1, err))) return rc;
    }
    d.dev_time = times; d.n_dev_time = (int)r->devtimes;
    d.n_source = dp__dpb_i32(r, DP__S_NSOURCE, i);
    if (d.n_source < 0 || (uint64_t)d.n_source > r->bytes[DP__S_SOURCE] / 2)   /* a name takes 2 bytes or more */
        return dp__fail(err, DP_ERR_RANGE, "%s: op '%s': %d source names, where section 'source' holds %llu bytes",
                        dp__dpb_where(r, DP__S_NSOURCE, dp__dpb_off(r, DP__S_NSOURCE, i), "op", i, at, sizeof at), dp__q(q, d.name), d.n_source,
                        (unsigned long long)r->bytes[DP__S_SOURCE]);
    if ((size_t)d.n_source > *room) {
        const char **m = (const char **)DP_REALLOC((void *)*srcs, sizeof **srcs * (size_t)d.n_source);
        if (!m) return dp__fail(err, DP_ERR_NOMEM, "%s: out of memory reading op %zu's %d source names", r->name, i, d.n_source);
        *srcs = m; *room = (size_t)d.n_source;
    }
    for (k = 0; k < d.n_source; k++) {
        uint64_t at0 = *spos;
        if (!((*srcs)[k] = dp__dpb_string(r, DP__S_SOURCE, spos)))
            return dp__fail(err, DP_ERR_PARSE, "%s: section 'source' (%llu bytes) ends before op %zu's source name %d", r->name,
                            (unsigned long long)r->bytes[DP__S_SOURCE], i, k);
        if (!(*srcs)[k][0])
            return dp__fail(err, DP_ERR_PARSE, "%s: op '%s': source name %d is empty",
                            dp__dpb_where(r, DP__S_SOURCE, r->off[DP__S_SOURCE] + at0, "op", i, at, sizeof at), dp__q(q, d.name), k);
    }
    d.source = *srcs;
    if ((rc = dp__graph_push_op(g, &d, NULL, err))) return dp__dpb_at(r, rc, DP__S_NAME, name_at, "op", i, err);
    return 0;
}

/* The graph of a checked file (dp__dpb_header): weights, ops (through
   dp_graph_add_op and dp_graph_add_weight: the same checks as every
   reader's), edges and the weights' uses, each value checked where it is. */
static int dp__dpb_build(const dp__dpb *r, dp_graph *g, dp_error *err)
{
    char at[400];
    const char **srcs = NULL;
    double times[DP_MAX_DEVICES];
    uint64_t pos = 0, spos = 0;
    size_t i, room = 0;
    int rc = 0;
    g->unit_speed = dp__lef64(r->p + 48);
    g->unit_bandwidth = dp__lef64(r->p + 56);
    g->n_ext_inputs = (int)r->ext;
    for (i = 0; i < r->weights; i++) {
        uint64_t name_at = pos;
        const char *nm = dp__dpb_string(r, DP__S_WNAME, &pos);
        double b = dp__dpb_f64(r, DP__S_WBYTES, i);
        if (!nm) return dp__fail(err, DP_ERR_PARSE, "%s: section 'wname' (%llu bytes) ends before weight %zu's name (%u weights)", r->name,
                                 (unsigned long long)r->bytes[DP__S_WNAME], i, r->weights);
        if ((rc = dp__dpb_cost(r, DP__S_WBYTES, i, "weight", i, nm, "bytes", b, 0, err))) return rc;
        if ((rc = dp_graph_add_weight(g, nm, b, NULL, err))) return dp__dpb_at(r, rc, DP__S_WNAME, name_at, "weight", i, err);
    }
    if (pos != r->bytes[DP__S_WNAME])
        return dp__fail(err, DP_ERR_PARSE, "%s: section 'wname' holds %llu bytes past its %u names", r->name,
                        (unsigned long long)(r->bytes[DP__S_WNAME] - pos), r->weights);
    if (dp__graph_reserve(g, r->ops, r->edges))
        return dp__fail(err, DP_ERR_NOMEM, "%s: out of memory making room for %u ops and %u edges", r->name, r->ops, r->edges);
    for (pos = 0, i = 0; i < r->ops && !rc; i++) rc = dp__dpb_op(r, g, i, &pos, &spos, &srcs, &room, times, err);
    DP_FREE((void *)srcs);
    if (rc) return rc;
    if (pos != r->bytes[DP__S_NAME] || spos != r->bytes[DP__S_SOURCE])
        return dp__fail(err, DP_ERR_PARSE, "%s: section '%s' holds %llu bytes past the names of its %u ops", r->name,
                        pos != r->bytes[DP__S_NAME] ? "opname" : "source",
                        (unsigned long long)(pos != r->bytes[DP__S_NAME] ? r->bytes[DP__S_NAME] - pos : r->bytes[DP__S_SOURCE] - spos), r->ops);
    for (i = 0; i < r->edges; i++) {   /* as dp__graph_push_edge checks them (the count is within DP_MAX_EDGES) */
        int a = dp__dpb_i32(r, DP__S_SRC, i), b = dp__dpb_i32(r, DP__S_DST, i);
        double bytes = dp__dpb_f64(r, DP__S_BYTES, i);
        if (a < 0 || a >= g->n_ops)
            return dp__fail(err, DP_ERR_GRAPH, "%s: source %d is not an op (0..%d)", dp__dpb_where(r, DP__S_SRC, dp__dpb_off(r, DP__S_SRC, i), "edge", i, at, sizeof at), a, g->n_ops - 1);
        if (b < 0 || b >= g->n_ops)
            return dp__fail(err, DP_ERR_GRAPH, "%s: target %d is not an op (0..%d)", dp__dpb_where(r, DP__S_DST, dp__dpb_off(r, DP__S_DST, i), "edge", i, at, sizeof at), b, g->n_ops - 1);
        if (a == b)
            return dp__fail(err, DP_ERR_GRAPH, "%s: self loop on op '%s'", dp__dpb_where(r, DP__S_DST, dp__dpb_off(r, DP__S_DST, i), "edge", i, at, sizeof at), g->name[a]);
        if ((rc = dp__dpb_cost(r, DP__S_BYTES, i, "edge", i, NULL, "bytes", bytes, 0, err))) return rc;
        DP__PUT(g->src, a);
        DP__PUT(g->dst, b);
        DP__PUT_Z(g->bytes, bytes, dp__zero_bits(bytes));
        g->n_edges++;
    }
    for (i = 0; i < r->uses; i++) {
        int v = dp__dpb_i32(r, DP__S_USEOP, i), w = dp__dpb_i32(r, DP__S_USEWT, i);
        if (v < 0 || v >= g->n_ops)
            return dp__fail(err, DP_ERR_GRAPH, "%s: op %d is not an op (0..%d)", dp__dpb_where(r, DP__S_USEOP, dp__dpb_off(r, DP__S_USEOP, i), "use", i, at, sizeof at), v, g->n_ops - 1);
        if (w < 0 || w >= g->n_weights)
            return dp__fail(err, DP_ERR_GRAPH, "%s: weight %d is not a weight (0..%d)", dp__dpb_where(r, DP__S_USEWT, dp__dpb_off(r, DP__S_USEWT, i), "use", i, at, sizeof at), w, g->n_weights - 1);
        if ((rc = dp_graph_use_weight(g, v, w, err))) return dp__dpb_at(r, rc, DP__S_USEOP, 4 * (uint64_t)i, "use", i, err);
    }
    return 0;
}

/* A .dpb file in buf[0..len) (name: for messages) into g, finalised. */
static int dp__read_dpb(dp_graph *g, const char *buf, size_t len, const char *name, dp_error *err)
{
    dp__dpb r;
    int rc;
    memset(&r, 0, sizeof r);
    r.p = (const unsigned char *)buf; r.len = len; r.name = name;
    g->format = DP_FORMAT_BINARY;
    if ((rc = dp__dpb_header(&r, err)) == 0) rc = dp__dpb_build(&r, g, err);
    return dp__read_finish(g, NULL, rc, name, dp__dpb_place, &r, err);
}

/* ---- entry points ------------------------------------------------------- */
/* A text format: buf (its BOM skipped) read as fmt (DP_FORMAT_AUTO: as its
   content looks); checked: its bytes are known to be text already. */
static int dp__read_text(dp_graph *g, const char *buf, size_t len, const char *name, dp_format fmt, int checked, dp_error *err)
{
    dp__text t;
    int rc;
    dp__skip_bom(&buf, &len);
    if ((rc = dp__text_init(&t, buf, len, name, checked, err))) return rc;
    if (fmt == DP_FORMAT_AUTO) {
        fmt = dp_format_detect(buf, len);
        if (fmt == DP_FORMAT_AUTO) {
            size_t i = 0;   /* buf need not end in a NUL: stay within len */
            while (i < len && buf[i] && strchr(" \t\r\n,", buf[i])) i++;
            if (i == len) return dp__fail(err, DP_ERR_PARSE, "%s:1: empty file", name);
            return dp__fail(err, DP_ERR_PARSE, "%s:1: cannot tell the format (not doppler-graph, DOPPLER or STG); use --format", name);
        }
    }
    g->format = fmt;
    switch (fmt) {   /* each reader ends in dp__read_finish: finalised, or freed */
    case DP_FORMAT_NATIVE:  rc = dp__read_native(g, &t, name, err); break;
    case DP_FORMAT_DOPPLER: rc = dp__read_doppler(g, &t, name, err); break;
    case DP_FORMAT_STG:     rc = dp__read_stg(g, &t, name, err); break;
    default: rc = dp__fail(err, DP_ERR_ARG, "%s: unknown format %d", name, (int)fmt);
    }
    dp__text_free(&t);
    return rc;
}

/* A whole graph file in buf[0..len): a .dpb one (fmt, or its magic) or a
   text one (checked: as dp__read_text). */
static int dp__read_buf(dp_graph *g, const char *buf, size_t len, const char *name, dp_format fmt, int checked, dp_error *err)
{
    if (len > DP_MAX_FILE_BYTES) return dp__fail(err, DP_ERR_LIMIT, "%s: %zu bytes exceed the limit of %zu (DP_MAX_FILE_BYTES)", name, len, (size_t)DP_MAX_FILE_BYTES);
    if (fmt == DP_FORMAT_BINARY || (fmt == DP_FORMAT_AUTO && dp__is_dpb(buf, len))) return dp__read_dpb(g, buf, len, name, err);
    return dp__read_text(g, buf, len, name, fmt, checked, err);
}

DPDEF int dp_graph_read_mem(dp_graph *g, const char *buf, size_t len, const char *name, dp_format fmt, dp_error *err)
{
    dp_graph_init(g);
    dp__ok(err);
    return dp__read_buf(g, buf, len, name ? name : "<memory>", fmt, 0, err);
}

/* The file mapped (dp__input_open): a text one checked for bytes no text
   holds as it is mapped, once; a .dpb file (its magic, or fmt) taken as
   it is. */
DPDEF int dp_graph_read(dp_graph *g, const char *path, dp_format fmt, dp_error *err)
{
    dp__input in;
    int rc;
    dp_graph_init(g);
    dp__ok(err);
    if ((rc = dp__input_open(&in, path, fmt == DP_FORMAT_BINARY ? 0 : fmt == DP_FORMAT_AUTO ? DP__TEXT_OR_DPB : 1, err))) return rc;
    rc = dp__read_buf(g, in.data, in.len, path, fmt, 1, err);
    dp__input_close(&in);
    return rc;
}

DPDEF int dp_graph_write_file(const dp_graph *g, FILE *f, dp_format fmt, dp_error *err)
{
    if (!g->finalized) return dp__fail(err, DP_ERR_ARG, "graph not finalised");
    switch (fmt) {
    case DP_FORMAT_AUTO:
    case DP_FORMAT_NATIVE:  return dp__write_native(g, f);
    case DP_FORMAT_DOPPLER: return dp__write_doppler(g, f, err);
    case DP_FORMAT_STG:     return dp__write_stg(g, f, err);
    case DP_FORMAT_BINARY:  return dp__write_dpb(g, f, err);
    }
    return dp__fail(err, DP_ERR_ARG, "unknown format %d", (int)fmt);
}

DPDEF int dp_graph_write(const dp_graph *g, const char *path, dp_format fmt, dp_error *err)
{
    dp__out o;
    int rc;
    if (fmt == DP_FORMAT_AUTO) fmt = dp_format_from_path(path);
    if ((rc = dp__out_open(&o, path, err))) return rc;
    rc = dp_graph_write_file(g, o.f, fmt, err);
    if (rc && err) {
        char pre[300];
        snprintf(pre, sizeof pre, "%.280s: ", path);
        dp__prefix(err, pre);
    }
    return dp__out_close(&o, rc, err);
}

/* ---- assignments -------------------------------------------------------- */
DPDEF int dp_assign_read_mem(const char *buf, size_t len, const char *name, int n_ops, int n_devices, int *assign, dp_error *err)
{
    dp__text t;
    char q[DP__Q];
    int rc, r, count = 0;
    int *tmp;
    if (!name) name = "<memory>";
    if (len > DP_MAX_FILE_BYTES) return dp__fail(err, DP_ERR_LIMIT, "%s: %zu bytes exceed the limit of %zu (DP_MAX_FILE_BYTES)", name, len, (size_t)DP_MAX_FILE_BYTES);
    if (n_ops < 1 || n_ops > DP_MAX_OPS || n_devices < 1) return dp__fail(err, DP_ERR_ARG, "%s: %d ops on %d devices: not a graph and cluster", name, n_ops, n_devices);
    dp__skip_bom(&buf, &len);
    if ((rc = dp__text_init(&t, buf, len, name, 0, err))) return rc;
    tmp = (int *)dp__alloc((size_t)n_ops, sizeof(int), err, "assignment");
    if (!tmp) return DP_ERR_NOMEM;
    while ((r = dp__text_line(&t, 1)) > 0) {
        char *tok[2];
        long long v;
        int n = dp__split(t.buf, tok, 1);
        if (n == 0) continue;
        if (n > 1) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: expected one device number per line, found more", name, t.line); goto done; }
        if (count >= n_ops) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: more entries than the graph's %d ops ('%s')", t.name, t.line, n_ops, dp__q(q, tok[0])); goto done; }
        if ((r = dp__int(tok[0], INT_MIN, INT_MAX, &v)) != 0) {
            rc = r == -2 ? dp__fail(err, DP_ERR_RANGE, "%s:%d: device '%s' of op %d is out of range 0..%d", t.name, t.line, dp__q(q, tok[0]), count, n_devices - 1)
                         : dp__fail(err, DP_ERR_PARSE, "%s:%d: device '%s' is not an integer", t.name, t.line, dp__q(q, tok[0]));
            goto done;
        }
        if (v < 0 || v >= n_devices) { rc = dp__fail(err, DP_ERR_RANGE, "%s:%d: device '%s' of op %d is out of range 0..%d", t.name, t.line, dp__q(q, tok[0]), count, n_devices - 1); goto done; }
        tmp[count++] = (int)v;
    }
    if (r < 0) { rc = dp__fail(err, DP_ERR_NOMEM, "%s: out of memory", name); goto done; }
    if (count < n_ops) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: %d entries, but the graph has %d ops", name, t.line > 0 ? t.line : 1, count, n_ops); goto done; }
    memcpy(assign, tmp, sizeof(int) * (size_t)n_ops);
done:
    dp__text_free(&t);
    DP_FREE(tmp);
    return rc;
}

DPDEF int dp_assign_read(const char *path, int n_ops, int n_devices, int *assign, dp_error *err)
{
    char *buf;
    size_t len;
    int rc;
    if ((rc = dp__slurp_text(path, &buf, &len, err))) return rc;
    rc = dp_assign_read_mem(buf, len, path, n_ops, n_devices, assign, err);
    DP_FREE(buf);
    return rc;
}

DPDEF int dp_assign_write(const char *path, const int *assign, int n_ops, dp_error *err)
{
    dp__out o;
    int rc, i;
    if ((rc = dp__out_open(&o, path, err))) return rc;
    fprintf(o.f, "# device of each op, in the graph file's node order (%d ops)\n", n_ops);
    for (i = 0; i < n_ops; i++) fprintf(o.f, "%d\n", assign[i]);
    return dp__out_close(&o, 0, err);
}

DPDEF int dp__utf8_len(const unsigned char *s)
{
    int n, i;
    unsigned cp;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) { n = 2; cp = s[0] & 0x1F; }
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) { n = 3; cp = s[0] & 0x0F; }
    else if (s[0] >= 0xF0 && s[0] <= 0xF4) { n = 4; cp = s[0] & 0x07; }
    else return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

static void dp__json_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        int n = dp__utf8_len(s);
        if (*s == '"' || *s == '\\') { fputc('\\', f); fputc(*s++, f); }
        else if (*s < 0x20 || *s == 0x7f || n == 0) fprintf(f, "\\u%04x", *s++);
        else { fwrite(s, 1, (size_t)n, f); s += n; }
    }
    fputc('"', f);
}

/* A mapping's entries: every op's source names (its name where it has
   none), in op order, entries of one name chained in that order. */
typedef struct dp__entries {
    char **key;          /* [m] the entry's name                           */
    int *owner;          /* [m] its op                                     */
    int *next, *first;   /* [m] the next entry with the same name (-1:
                            none); the first one's index                   */
    int m;
    void *ix;            /* name -> its first entry                        */
} dp__entries;

static void dp__entries_free(dp__entries *x)
{
    DP_FREE(x->key); DP_FREE(x->owner); DP_FREE(x->next); DP_FREE(x->first); DP_FREE(x->ix);
    memset(x, 0, sizeof *x);
}

static int dp__entries_init(dp__entries *x, const dp_graph *g, const char *name, dp_error *err)
{
    int *last = NULL, v, i, j;
    size_t m = 0;
    memset(x, 0, sizeof *x);
    for (v = 0; v < g->n_ops; v++) m += g->n_source[v] ? (size_t)g->n_source[v] : 1;
    if (m > (size_t)INT_MAX / 2) return dp__fail(err, DP_ERR_LIMIT, "%s: %zu entries", name, m);
    x->m = (int)m;
    x->key = (char **)dp__alloc(m, sizeof *x->key, err, "mapping");
    x->owner = (int *)dp__alloc(m, sizeof(int), err, "mapping");
    x->next = (int *)dp__alloc(m, sizeof(int), err, "mapping");
    x->first = (int *)dp__alloc(m, sizeof(int), err, "mapping");
    last = (int *)dp__alloc(m, sizeof(int), err, "mapping");
    if (!x->key || !x->owner || !x->next || !x->first || !last || dp__index_reserve(&x->ix, m)) {
        DP_FREE(last);
        dp__entries_free(x);
        return dp__fail(err, DP_ERR_NOMEM, "%s: out of memory (%zu entries)", name, m);
    }
    for (v = 0, j = 0; v < g->n_ops; v++) {
        const char *k = g->n_source[v] ? g->source[v] : g->name[v];
        for (i = 0; i < (g->n_source[v] ? g->n_source[v] : 1); i++, j++, k += strlen(k) + 1) {
            uint64_t h = dp__hash_str(k);
            int f = dp__index_find_str(x->ix, x->key, k, h);
            x->key[j] = (char *)k; x->owner[j] = v; x->next[j] = -1;
            if (f >= 0) { x->first[j] = f; x->next[last[f]] = j; last[f] = j; }   /* a name seen before */
            else { dp__index_put((dp__index *)x->ix, h, j); x->first[j] = last[j] = j; }
        }
    }
    DP_FREE(last);
    return 0;
}

typedef struct dp__mapping_ctx {
    const dp_graph *g;
    const int *assign;
    const dp_mapping_info *info;
    dp__entries e;
} dp__mapping_ctx;

static int dp__mapping_body(void *ctx, FILE *f, dp_error *err)
{
    const dp__mapping_ctx *x = (const dp__mapping_ctx *)ctx;
    const dp__entries *e = &x->e;
    const dp_mapping_info *in = x->info;
    int j, k, devices = 0, first = 1;
    (void)err;
    for (j = 0; j < x->g->n_ops; j++) if (x->assign[j] + 1 > devices) devices = x->assign[j] + 1;
    if (in && in->devices > 0) devices = in->devices;
    fputs("{\"format\": \"doppler-mapping 1\", \"graph\": ", f);
    if (in && in->graph) dp__json_str(f, in->graph); else fputs("null", f);
    fputs(", \"method\": ", f);
    if (in && in->method) dp__json_str(f, in->method); else fputs("null", f);
    fprintf(f, ", \"devices\": %d, \"makespan\": ", devices);
    if (in && in->makespan >= 0 && in->makespan < HUGE_VAL) fprintf(f, "%.17g", in->makespan); else fputs("null", f);
    fprintf(f, ", \"ops\": %d, \"entries\": %d,\n \"mapping\": {", x->g->n_ops, e->m);
    for (j = 0; j < e->m; j++) {
        if (e->first[j] != j) continue;
        fputs(first ? "\n  " : ",\n  ", f);
        first = 0;
        dp__json_str(f, e->key[j]);
        if (e->next[j] < 0) { fprintf(f, ": %d", x->assign[e->owner[j]]); continue; }
        fputs(": [", f);
        for (k = j; k >= 0; k = e->next[k]) fprintf(f, k == j ? "%d" : ", %d", x->assign[e->owner[k]]);
        fputc(']', f);
    }
    fputs("\n}}\n", f);
    return 0;
}

DPDEF int dp_mapping_write(const char *path, const dp_graph *g, const int *assign,
                           const dp_mapping_info *info, dp_error *err)
{
    dp__mapping_ctx x;
    int v, rc;
    memset(&x, 0, sizeof x);
    if (!g || !assign || !path) return dp__fail(err, DP_ERR_ARG, "mapping: graph, assignment or path missing");
    for (v = 0; v < g->n_ops; v++)
        if (assign[v] < 0 || assign[v] >= DP_MAX_DEVICES) return dp__fail(err, DP_ERR_RANGE, "mapping: op '%s' on device %d (0..%d)", g->name[v], assign[v], DP_MAX_DEVICES - 1);
    if ((rc = dp__entries_init(&x.e, g, "mapping", err))) return rc;
    x.g = g; x.assign = assign; x.info = info;
    rc = dp_write_file(path, dp__mapping_body, &x, err);
    dp__entries_free(&x.e);
    return rc;
}

/* ---- reading a mapping file: just enough JSON ---------------------------- */
typedef struct dp__json {
    const char *p, *end, *name;
    dp_error *err;
} dp__json;

static int dp__json_line(const dp__json *j, const char *start)
{
    int line = 1;
    const char *q;
    for (q = start; q < j->p; q++) line += *q == '\n';
    return line;
}

/* A character of a bare JSON token (number, true, false, null). */
static int dp__json_word(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
}

static void dp__json_ws(dp__json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int dp__json_fail(dp__json *j, const char *start, const char *what)
{
    return dp__fail(j->err, DP_ERR_PARSE, "%s:%d: %s (found '%.12s')", j->name, dp__json_line(j, start), what,
                    j->p < j->end ? j->p : "end of file");
}

static int dp__json_hex4(const char *s, unsigned *out)
{
    int i, v;
    *out = 0;
    for (i = 0; i < 4; i++) {
        if ((v = dp__hexval((unsigned char)s[i])) < 0) return -1;
        *out = *out << 4 | (unsigned)v;
    }
    return 0;
}

/* A JSON string at j->p, decoded (UTF-8) into a new buffer *out. */
static int dp__json_string(dp__json *j, const char *start, char **out)
{
    const char *q;
    char *w;
    *out = NULL;
    if (j->p >= j->end || *j->p != '"') return dp__json_fail(j, start, "expected a string");
    for (q = ++j->p; q < j->end && *q != '"'; q++) if (*q == '\\') q++;
    if (q >= j->end) return dp__json_fail(j, start, "unterminated string");
    if (!(*out = w = (char *)DP_MALLOC((size_t)(q - j->p) + 1))) return dp__fail(j->err, DP_ERR_NOMEM, "%s: out of memory", j->name);
    while (j->p < q) {
        unsigned cp, lo;
        char c = *j->p++;
        if ((unsigned char)c < 0x20) { DP_FREE(*out); *out = NULL; return dp__json_fail(j, start, "control character in a string"); }
        if (c != '\\') { *w++ = c; continue; }
        c = *j->p++;
        switch (c) {
        case '"': case '\\': case '/': *w++ = c; continue;
        case 'b': *w++ = '\b'; continue;
        case 'f': *w++ = '\f'; continue;
        case 'n': *w++ = '\n'; continue;
        case 'r': *w++ = '\r'; continue;
        case 't': *w++ = '\t'; continue;
        case 'u': break;
        default: DP_FREE(*out); *out = NULL; j->p--; return dp__json_fail(j, start, "unknown escape in a string");
        }
        if (q - j->p < 4 || dp__json_hex4(j->p, &cp)) { DP_FREE(*out); *out = NULL; return dp__json_fail(j, start, "bad \\u escape"); }
        j->p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && q - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
            !dp__json_hex4(j->p + 2, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            j->p += 6;
        }
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) { DP_FREE(*out); *out = NULL; return dp__json_fail(j, start, "\\u0000 or a lone surrogate in a string"); }
        if (cp < 0x80) *w++ = (char)cp;
        else if (cp < 0x800) { *w++ = (char)(0xC0 | cp >> 6); *w++ = (char)(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) { *w++ = (char)(0xE0 | cp >> 12); *w++ = (char)(0x80 | (cp >> 6 & 0x3F)); *w++ = (char)(0x80 | (cp & 0x3F)); }
        else { *w++ = (char)(0xF0 | cp >> 18); *w++ = (char)(0x80 | (cp >> 12 & 0x3F)); *w++ = (char)(0x80 | (cp >> 6 & 0x3F)); *w++ = (char)(0x80 | (cp & 0x3F)); }
    }
    *w = 0;
    j->p = q + 1;
    return 0;
}

/* The next member of an object whose '{' was read (*count: members so far):
   *key (the caller frees it) with j->p past its ':', or *key NULL at the
   object's '}'; nonzero on an error. */
static int dp__json_member(dp__json *j, const char *start, int *count, char **key)
{
    int rc;
    *key = NULL;
    dp__json_ws(j);
    if (j->p < j->end && *j->p == '}') { j->p++; return 0; }
    if ((*count)++) {
        if (j->p >= j->end || *j->p != ',') return dp__json_fail(j, start, "expected ',' or '}'");
        j->p++;
        dp__json_ws(j);
    }
    if ((rc = dp__json_string(j, start, key))) return rc;
    dp__json_ws(j);
    if (j->p >= j->end || *j->p != ':') { DP_FREE(*key); *key = NULL; return dp__json_fail(j, start, "expected ':'"); }
    j->p++;
    return 0;
}

/* Skips one JSON value (depth-limited). */
static int dp__json_skip(dp__json *j, const char *start, int depth)
{
    char *s;
    int rc;
    dp__json_ws(j);
    if (j->p >= j->end) return dp__json_fail(j, start, "expected a value");
    if (depth > 64) return dp__json_fail(j, start, "nested too deeply");
    if (*j->p == '"') { rc = dp__json_string(j, start, &s); DP_FREE(s); return rc; }
    if (*j->p == '{') {
        int n = 0;
        j->p++;
        for (;;) {
            if ((rc = dp__json_member(j, start, &n, &s))) return rc;
            if (!s) return 0;
            DP_FREE(s);
            if ((rc = dp__json_skip(j, start, depth + 1))) return rc;
        }
    }
    if (*j->p == '[') {
        j->p++;
        for (int n = 0;; n++) {
            dp__json_ws(j);
            if (j->p < j->end && *j->p == ']') { j->p++; return 0; }
            if (n) {
                if (j->p >= j->end || *j->p != ',') return dp__json_fail(j, start, "expected ',' or ']'");
                j->p++;
            }
            if ((rc = dp__json_skip(j, start, depth + 1))) return rc;
        }
    }
    while (j->p < j->end && dp__json_word(*j->p)) j->p++;
    return 0;
}

/* A device number at j->p: an integer in [0, n_devices). */
static int dp__json_device(dp__json *j, const char *start, const char *key, int n_devices, int *out)
{
    char num[32];
    size_t l = 0;
    long long v;
    dp__json_ws(j);
    while (j->p < j->end && l + 1 < sizeof num && dp__json_word(*j->p)) num[l++] = *j->p++;
    num[l] = 0;
    if (dp__int(num, 0, n_devices - 1, &v))
        return dp__fail(j->err, l && dp__int(num, LLONG_MIN, LLONG_MAX, &v) == 0 ? DP_ERR_RANGE : DP_ERR_PARSE,
                        "%s:%d: '%.100s': device '%s' is not an integer in 0..%d", j->name, dp__json_line(j, start), key, num, n_devices - 1);
    *out = (int)v;
    return 0;
}

DPDEF int dp_mapping_read_mem(const char *buf, size_t len, const char *name, const dp_graph *g,
                              int n_devices, int *assign, dp_error *err)
{
    dp__json j;
    dp__entries en;
    char *s = NULL;
    int *dev = NULL, *taken = NULL, *tmp = NULL;
    int v, i, e, rc = 0, found = 0;
    if (!buf || !g || !assign) return dp__fail(err, DP_ERR_ARG, "mapping read: buffer, graph or assignment missing");
    if (!name) name = "<memory>";
    if (n_devices < 1) return dp__fail(err, DP_ERR_ARG, "%s: %d devices", name, n_devices);
    dp__skip_bom(&buf, &len);
    j.p = buf; j.end = buf + len; j.name = name; j.err = err;
    if ((rc = dp__entries_init(&en, g, name, err))) return rc;
    dev = (int *)dp__alloc((size_t)en.m, sizeof(int), err, "mapping");
    taken = (int *)dp__alloc((size_t)en.m, sizeof(int), err, "mapping");   /* zeroed */
    tmp = (int *)dp__alloc((size_t)g->n_ops, sizeof(int), err, "mapping");
    if (!dev || !taken || !tmp) { rc = dp__fail(err, DP_ERR_NOMEM, "%s: out of memory (%d entries)", name, en.m); goto done; }
    for (e = 0; e < en.m; e++) dev[e] = -1;
    /* the top object: find "mapping", skip the rest */
    dp__json_ws(&j);
    if (j.p >= j.end || *j.p != '{') { rc = dp__json_fail(&j, buf, "a mapping file is a JSON object"); goto done; }
    j.p++;
    for (i = 0;;) {
        if ((rc = dp__json_member(&j, buf, &i, &s))) goto done;
        if (!s) break;
        if (strcmp(s, "mapping") != 0) {
            DP_FREE(s); s = NULL;
            if ((rc = dp__json_skip(&j, buf, 0))) goto done;
            continue;
        }
        DP_FREE(s); s = NULL;
        found = 1;
        dp__json_ws(&j);
        if (j.p >= j.end || *j.p != '{') { rc = dp__json_fail(&j, buf, "\"mapping\" must be an object"); goto done; }
        j.p++;
        for (int n = 0;;) {
            int f, d;
            if ((rc = dp__json_member(&j, buf, &n, &s))) goto done;
            if (!s) break;
            if ((f = dp__index_find_str(en.ix, en.key, s, dp__hash_str(s))) < 0) {
                rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: '%.200s' is no op's source name or name in the graph", name, dp__json_line(&j, buf), s);
                goto done;
            }
            if (taken[f]) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: '%.200s' is given twice", name, dp__json_line(&j, buf), s); goto done; }
            taken[f] = 1;
            dp__json_ws(&j);
            if (j.p < j.end && *j.p == '[') {   /* one device per entry of that name, in op order */
                int k = 0;
                j.p++;
                for (e = f;; k++) {
                    dp__json_ws(&j);
                    if (j.p < j.end && *j.p == ']') { j.p++; break; }
                    if (k) {
                        if (j.p >= j.end || *j.p != ',') { rc = dp__json_fail(&j, buf, "expected ',' or ']'"); goto done; }
                        j.p++;
                    }
                    if ((rc = dp__json_device(&j, buf, s, n_devices, &d))) goto done;
                    if (e < 0) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: '%.200s' lists more than the graph's %d entries of that name", name, dp__json_line(&j, buf), s, k); goto done; }
                    dev[e] = d;
                    e = en.next[e];
                }
                if (e >= 0) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: '%.200s' lists %d devices; the graph has more entries of that name", name, dp__json_line(&j, buf), s, k); goto done; }
            } else {
                if ((rc = dp__json_device(&j, buf, s, n_devices, &d))) goto done;
                if (en.next[f] >= 0) { rc = dp__fail(err, DP_ERR_GRAPH, "%s:%d: '%.200s' names several entries of the graph: give a list of their devices", name, dp__json_line(&j, buf), s); goto done; }
                dev[f] = d;
            }
            DP_FREE(s); s = NULL;
        }
    }
    dp__json_ws(&j);
    if (j.p < j.end) { rc = dp__json_fail(&j, buf, "text after the mapping object"); goto done; }
    if (!found) { rc = dp__fail(err, DP_ERR_PARSE, "%s: no \"mapping\" object (not a doppler mapping file?)", name); goto done; }
    for (v = 0; v < g->n_ops; v++) tmp[v] = -1;
    for (e = 0; e < en.m; e++) {
        v = en.owner[e];
        if (dev[e] < 0) { rc = dp__fail(err, DP_ERR_GRAPH, "%s: op '%s': no device for '%.200s'", name, g->name[v], en.key[e]); goto done; }
        if (tmp[v] >= 0 && tmp[v] != dev[e]) {
            rc = dp__fail(err, DP_ERR_GRAPH, "%s: op '%s': its names disagree ('%.200s' on device %d, an earlier one on %d)", name, g->name[v], en.key[e], dev[e], tmp[v]);
            goto done;
        }
        tmp[v] = dev[e];
    }
    memcpy(assign, tmp, sizeof(int) * (size_t)g->n_ops);
done:
    DP_FREE(s); DP_FREE(dev); DP_FREE(taken); DP_FREE(tmp);
    dp__entries_free(&en);
    return rc;
}

DPDEF int dp_mapping_read(const char *path, const dp_graph *g, int n_devices, int *assign, dp_error *err)
{
    char *buf;
    size_t len;
    int rc;
    if ((rc = dp__slurp_text(path, &buf, &len, err))) return rc;
    rc = dp_mapping_read_mem(buf, len, path, g, n_devices, assign, err);
    DP_FREE(buf);
    return rc;
}

/* ======================================================================
   >>cluster
   ====================================================================== */
DPDEF void dp_cluster_free(dp_cluster *c)
{
    if (!c) return;
    DP_FREE(c->speed); DP_FREE(c->memory); DP_FREE(c->bandwidth); DP_FREE(c->latency); DP_FREE(c->name);
    DP_FREE(c->kind_speed); DP_FREE(c->overhead); DP_FREE(c->curve); DP_FREE(c->curve_len); DP_FREE(c->node);
    memset(c, 0, sizeof *c);
}

DPDEF int dp_cluster_homogeneous(dp_cluster *c, int n, double speed, double bandwidth, double latency, dp_error *err)
{
    int a, b;
    memset(c, 0, sizeof *c);
    if (n < 1 || n > DP_MAX_DEVICES) return dp__fail(err, n < 1 ? DP_ERR_RANGE : DP_ERR_LIMIT, "device count %d not in 1..%d (DP_MAX_DEVICES)", n, DP_MAX_DEVICES);
    if (!(speed > 0) || speed == HUGE_VAL) return dp__fail(err, DP_ERR_RANGE, "device speed %g must be positive and finite", speed);
    if (!(bandwidth > 0)) return dp__fail(err, DP_ERR_RANGE, "bandwidth %g must be positive", bandwidth);
    if (!(latency >= 0) || latency == HUGE_VAL) return dp__fail(err, DP_ERR_RANGE, "latency %g must be finite and >= 0", latency);
    c->n = n;
    c->speed = (double *)dp__alloc((size_t)n, sizeof(double), err, "cluster");
    c->memory = (double *)dp__alloc((size_t)n, sizeof(double), err, "cluster");
    c->bandwidth = (double *)dp__alloc((size_t)n * n, sizeof(double), err, "cluster");
    c->latency = (double *)dp__alloc((size_t)n * n, sizeof(double), err, "cluster");
    c->name = (char (*)[32])dp__alloc((size_t)n, 32, err, "cluster");
    c->kind_speed = (double *)dp__alloc((size_t)n * DP_KIND__COUNT, sizeof(double), err, "cluster");
    c->overhead = (double *)dp__alloc((size_t)n, sizeof(double), err, "cluster");
    c->curve = (dp_speed_point *)dp__alloc((size_t)n * DP_KIND__COUNT * DP_MAX_CURVE, sizeof(dp_speed_point), err, "cluster");
    c->curve_len = (int *)dp__alloc((size_t)n * DP_KIND__COUNT, sizeof(int), err, "cluster");
    c->node = (int *)dp__alloc((size_t)n, sizeof(int), err, "cluster");
    if (!c->speed || !c->memory || !c->bandwidth || !c->latency || !c->name || !c->kind_speed || !c->overhead || !c->curve || !c->curve_len || !c->node) {
        dp_cluster_free(c);
        return DP_ERR_NOMEM;
    }
    for (a = 0; a < n; a++) {
        c->speed[a] = speed;
        snprintf(c->name[a], 32, "dev%d", a);
        for (b = 0; b < n; b++) {
            c->bandwidth[a * n + b] = bandwidth;
            c->latency[a * n + b] = a == b ? 0 : latency;
        }
    }
    return 0;
}

DPDEF int dp_cluster_for_graph(dp_cluster *c, const dp_graph *g, int n, dp_error *err)
{
    if (n <= 0) n = g->n_dev_time > 0 ? g->n_dev_time : 4;
    return dp_cluster_homogeneous(c, n, g->unit_speed, g->unit_bandwidth, 0.0, err);
}

/* Real GPUs. Dense peak FLOP/s (sparsity's doubled figures halved),
   memory and bandwidths from the vendors' datasheets:
   - H100 SXM5 and PCIe: NVIDIA H100 Tensor Core GPU datasheet (2023) and
     "NVIDIA H100 Tensor Core GPU Architecture" whitepaper (2022), table 3:
     SXM5 FP32 66.9 TF, TF32 494.7, BF16/FP16 989.4, FP8 1978.9; 80 GB
     HBM3 at 3.35 TB/s; NVLink 4 900 GB/s (both directions together).
     PCIe: FP32 51.2 TF, TF32 378, BF16/FP16 756, FP8 1513; 80 GB HBM2e
     at 2.0 TB/s; PCIe Gen5 x16 128 GB/s (both directions together).
   - H200 SXM: NVIDIA H200 Tensor Core GPU datasheet (2024): the H100
     SXM5's compute, 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s.
   - A100 SXM4 and PCIe 80GB: NVIDIA A100 Tensor Core GPU datasheet
     (2021): FP32 19.5 TF, TF32 156, BF16/FP16 312, no FP8; SXM4 2.039
     TB/s, NVLink 3 600 GB/s; PCIe 1.935 TB/s, PCIe Gen4 x16 64 GB/s.
   A datasheet's "80 GB" is taken as 80 GiB (nvidia-smi shows 81559 MiB
   on an H100 80GB). Links: half the two-way figure per direction. */
typedef struct dp__gpu {
    const char *name, *what;
    double fp32, tf32, bf16, fp8;   /* dense peak FLOP/s; fp16 = bf16; 0: none */
    double hbm, memory;             /* bytes/s; bytes                          */
    double link, latency;           /* bytes/s per direction; seconds          */
} dp__gpu;

static const dp__gpu dp__gpus[] = {
    {"h100-sxm", "H100 SXM5 80GB, NVLink 4 (NVSwitch)", 66.9e12, 494.7e12, 989.4e12, 1978.9e12, 3.35e12, 80.0 * 1073741824.0, 450e9, 5e-6},
    {"h200-sxm", "H200 SXM 141GB, NVLink 4 (NVSwitch)", 66.9e12, 494.7e12, 989.4e12, 1978.9e12, 4.8e12, 141.0 * 1073741824.0, 450e9, 5e-6},
    {"h100-pcie", "H100 PCIe 80GB, PCIe Gen5", 51.2e12, 378e12, 756e12, 1513e12, 2.0e12, 80.0 * 1073741824.0, 64e9, 10e-6},
    {"a100-sxm", "A100 SXM4 80GB, NVLink 3 (NVSwitch)", 19.5e12, 156e12, 312e12, 0, 2.039e12, 80.0 * 1073741824.0, 300e9, 5e-6},
    {"a100-pcie", "A100 PCIe 80GB, PCIe Gen4", 19.5e12, 156e12, 312e12, 0, 1.935e12, 80.0 * 1073741824.0, 32e9, 10e-6},
};
#define DP__N_GPUS ((int)(sizeof dp__gpus / sizeof dp__gpus[0]))
#define DP__GPU_MAX_DEVICES 8      /* one HGX board / one PCIe server        */
#define DP__GPU_MATRIX_EFF  0.7    /* assumed: sustained matmul / dense peak  */
#define DP__GPU_HBM_EFF     0.9    /* assumed: streaming kernels / HBM peak   */
#define DP__GPU_LINK_EFF    0.8    /* assumed: device-to-device copy / link   */
#define DP__GPU_OVERHEAD    5e-6   /* assumed: seconds per op (kernel launch) */

/* Elements read or written per FLOP of each memory-bound kind, by
   demos/onnx2dpg.py's FLOP rules (element-wise 1 FLOP per output element,
   transcendental 4, softmax and layernorm 5, rmsnorm 4, reductions 1 per
   input element, copies 1 per output element): add reads two and writes
   one (3), mul the same, scale and relu read one and write one (2), gelu
   and silu 2 / 4, softmax and layernorm 2 / 5, rmsnorm 2 / 4, reduce 1,
   concat, split, transpose, copy and opaque 2. Matmul and input: 0 (the
   matrix speed; inputs cost nothing). */
static double dp__gpu_kinds(dp_kind k)
{
    switch (k) {
    case DP_OP_ADD: case DP_OP_MUL: return 3;
    case DP_OP_SCALE: case DP_OP_RELU: return 2;
    case DP_OP_GELU: case DP_OP_SILU: case DP_OP_RMSNORM: return 0.5;
    case DP_OP_SOFTMAX: case DP_OP_LAYERNORM: return 0.4;
    case DP_OP_REDUCE: return 1;
    case DP_OP_CONCAT: case DP_OP_SPLIT: case DP_OP_TRANSPOSE: case DP_OP_COPY: case DP_OP_OPAQUE: return 2;
    default: return 0;
    }
}

static int dp__gpu_preset(dp_cluster *c, const dp__gpu *gpu, const char *name, const char *count, const char *precision, dp_error *err)
{
    static const char *const precs[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
    static const double elem[] = {4, 4, 2, 2, 1};
    long long n = DP__GPU_MAX_DEVICES;
    double peak;
    int p, d, k, rc;
    if (!precision) precision = "fp32";
    if ((p = dp__name_index(precs, 5, precision)) < 0)
        return dp__fail(err, DP_ERR_ARG, "preset '%s': unknown precision '%s' (fp32, tf32, bf16, fp16, fp8)", name, precision);
    peak = p == 0 ? gpu->fp32 : p == 1 ? gpu->tf32 : p == 4 ? gpu->fp8 : gpu->bf16;
    if (!(peak > 0)) return dp__fail(err, DP_ERR_ARG, "preset '%s': the %s has no %s (fp32, tf32, bf16, fp16)", name, gpu->what, precision);
    if (count && dp__count(count, 1, DP__GPU_MAX_DEVICES, &n, DP_ERR_RANGE))
        return dp__fail(err, DP_ERR_RANGE, "preset '%s': device count '%s' not in 1..%d (one board)", name, count, DP__GPU_MAX_DEVICES);
    if ((rc = dp_cluster_homogeneous(c, (int)n, DP__GPU_MATRIX_EFF * peak, DP__GPU_LINK_EFF * gpu->link, gpu->latency, err))) return rc;
    c->link = DP_LINK_SERIAL;
    for (d = 0; d < c->n; d++) {
        c->memory[d] = gpu->memory;
        c->overhead[d] = DP__GPU_OVERHEAD;
        snprintf(c->name[d], 32, "%.20s:%d", gpu->name, d & 0xff);   /* d < 8 */
        for (k = 0; k < DP_KIND__COUNT; k++) {
            double per_flop = dp__gpu_kinds((dp_kind)k) * elem[p];   /* bytes per FLOP */
            if (per_flop > 0) c->kind_speed[(size_t)d * DP_KIND__COUNT + k] = DP__GPU_HBM_EFF * gpu->hbm / per_flop;
        }
    }
    return 0;
}

DPDEF int dp_cluster_preset_at(dp_cluster *c, const char *name, const char *precision, dp_error *err)
{
    long long n;
    int i;
    memset(c, 0, sizeof *c);
    if (!name) return dp__fail(err, DP_ERR_ARG, "cluster preset: no name");
    for (i = 0; i < DP__N_GPUS; i++) {
        size_t l = strlen(dp__gpus[i].name);
        if (strncmp(name, dp__gpus[i].name, l) == 0 && (name[l] == 0 || name[l] == ':'))
            return dp__gpu_preset(c, &dp__gpus[i], name, name[l] ? name + l + 1 : NULL, precision, err);
    }
    if (precision)
        return dp__fail(err, DP_ERR_ARG, "preset '%s': a precision ('%s') applies to the GPU presets only (h100-sxm, h200-sxm, h100-pcie, a100-sxm, a100-pcie)", name, precision);
    if (strcmp(name, "reference") == 0) return dp_cluster_homogeneous(c, 4, 1e10, 1e10, 0.0, err);
    if (strncmp(name, "homogeneous:", 12) == 0) {
        dp_code bad = dp__count(name + 12, 1, DP_MAX_DEVICES, &n, DP_ERR_RANGE);
        if (bad) return dp__fail(err, bad, "preset '%s': device count not in 1..%d (DP_MAX_DEVICES)", name, DP_MAX_DEVICES);
        return dp_cluster_homogeneous(c, (int)n, 1.0, 1.0, 0.0, err);
    }
    return dp__fail(err, DP_ERR_ARG, "unknown cluster preset '%s' (known: reference, homogeneous:N, h100-sxm:N, h200-sxm:N, h100-pcie:N, a100-sxm:N, a100-pcie:N)", name);
}

DPDEF int dp_cluster_preset(dp_cluster *c, const char *name, dp_error *err)
{
    return dp_cluster_preset_at(c, name, NULL, err);
}

DPDEF int dp_cluster_set_nodes(dp_cluster *c, int k, double bandwidth, double latency, dp_error *err)
{
    int a, b;
    if (!c || c->n < 1 || !c->node) return dp__fail(err, DP_ERR_ARG, "set_nodes: cluster missing or not made by dp_cluster_homogeneous/read");
    if (k < 1 || k > c->n) return dp__fail(err, DP_ERR_RANGE, "set_nodes: %d nodes for %d devices (1..%d)", k, c->n, c->n);
    if (!(bandwidth > 0) || bandwidth == HUGE_VAL) return dp__fail(err, DP_ERR_RANGE, "set_nodes: bandwidth %g between nodes must be positive and finite", bandwidth);
    if (!(latency >= 0) || latency == HUGE_VAL) return dp__fail(err, DP_ERR_RANGE, "set_nodes: latency %g between nodes must be finite and >= 0", latency);
    for (a = 0; a < c->n; a++) c->node[a] = (int)((long long)a * k / c->n);
    for (a = 0; a < c->n; a++)
        for (b = 0; b < c->n; b++)
            if (c->node[a] != c->node[b]) { c->bandwidth[a * c->n + b] = bandwidth; c->latency[a * c->n + b] = latency; }
    return 0;
}

/* A cluster file's "nodes K" (devices split into K nodes, as
   dp_cluster_set_nodes, links unchanged) or "internode [bandwidth=B]
   [latency=L]" (every link between two nodes, as the devices' nodes stand
   then). */
static int dp__cl_nodes_line(dp_cluster *c, char **tok, int n, int *used, const char *name, int line, dp_error *err)
{
    long long k;
    double v;
    int a, b, i;
    const char *s;
    if (!c->n) return dp__fail(err, DP_ERR_PARSE, "%s:%d: '%s' before 'devices N'", name, line, tok[0]);
    if (tok[0][0] == 'n') {
        if (n != 2 || dp__int(tok[1], 1, c->n, &k)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: nodes '%s' not in 1..%d (the devices)", name, line, n > 1 ? tok[1] : "", c->n);
        for (a = 0; a < c->n; a++) c->node[a] = (int)((long long)a * k / c->n);
        return 0;
    }
    for (i = 0; i < 2; i++) {
        const char *key = i ? "latency" : "bandwidth";
        if ((s = dp__kv(tok, n, key, used)) == NULL) continue;
        if (dp__num(s, &v, 0) || (!i && v <= 0))
            return dp__fail(err, DP_ERR_RANGE, "%s:%d: internode %s '%s' must be a %s number", name, line, key, s, i ? "finite non-negative" : "positive");
        for (a = 0; a < c->n; a++)
            for (b = 0; b < c->n; b++)
                if (c->node[a] != c->node[b]) (i ? c->latency : c->bandwidth)[a * c->n + b] = v;
    }
    for (i = 1; i < n; i++) if (!used[i]) return dp__fail(err, DP_ERR_PARSE, "%s:%d: unknown field '%s'", name, line, tok[i]);
    return 0;
}

/* A cluster file's "device I [name=N] [speed=S] [memory=M] [overhead=O]"
   or "pair A B [bandwidth=B] [latency=L]" line (n tokens; used marks the
   tokens read). */
static int dp__cl_device_line(dp_cluster *c, char **tok, int n, int *used, const char *name, int line, dp_error *err)
{
    long long k;
    double v;
    int i;
    int is_pair = tok[0][0] == 'p', a = 0, b = 0, nidx = is_pair ? 2 : 1;
    const char *s;
    if (!c->n) return dp__fail(err, DP_ERR_PARSE, "%s:%d: '%s' before 'devices N'", name, line, tok[0]);
    for (i = 1; i <= nidx; i++) {
        if (n <= i || dp__int(tok[i], 0, c->n - 1, &k)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: device index '%s' not in 0..%d", name, line, n > i ? tok[i] : "", c->n - 1);
        used[i] = 1;
        if (i == 1) a = (int)k; else b = (int)k;
    }
    if (!is_pair) {
        if ((s = dp__kv(tok, n, "name", used)) != NULL) snprintf(c->name[a], 32, "%s", s);
        if ((s = dp__kv(tok, n, "speed", used)) != NULL) {
            if (dp__num(s, &v, 0) || v <= 0) return dp__fail(err, DP_ERR_RANGE, "%s:%d: device %d: speed '%s' must be positive", name, line, a, s);
            c->speed[a] = v;
        }
        if ((s = dp__kv(tok, n, "memory", used)) != NULL) {
            if (dp__num(s, &v, 0)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: device %d: memory '%s' must be a non-negative number", name, line, a, s);
            c->memory[a] = v;
        }
        if ((s = dp__kv(tok, n, "overhead", used)) != NULL) {
            if (dp__num(s, &v, 0)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: device %d: overhead '%s' must be a finite non-negative number", name, line, a, s);
            c->overhead[a] = v;
        }
        if ((s = dp__kv(tok, n, "node", used)) != NULL) {
            if (dp__int(s, 0, c->n - 1, &k)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: device %d: node '%s' not in 0..%d", name, line, a, s, c->n - 1);
            c->node[a] = (int)k;
        }
    } else {
        if (a == b) return dp__fail(err, DP_ERR_RANGE, "%s:%d: pair %d %d: a device has no link to itself", name, line, a, b);
        if ((s = dp__kv(tok, n, "bandwidth", used)) != NULL) {
            if (dp__num(s, &v, 0) || v <= 0) return dp__fail(err, DP_ERR_RANGE, "%s:%d: pair %d %d: bandwidth '%s' must be positive", name, line, a, b, s);
            c->bandwidth[a * c->n + b] = v;
        }
        if ((s = dp__kv(tok, n, "latency", used)) != NULL) {
            if (dp__num(s, &v, 0)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: pair %d %d: latency '%s' must be a non-negative number", name, line, a, b, s);
            c->latency[a * c->n + b] = v;
        }
    }
    for (i = 0; i < n; i++) if (!used[i]) return dp__fail(err, DP_ERR_PARSE, "%s:%d: unknown field '%s'", name, line, tok[i]);
    return 0;
}

/* A cluster file's "kindspeed DEVICE|all KIND SPEED" or "... WORK:SPEED
   ..." line (n tokens). */
static int dp__cl_kindspeed_line(dp_cluster *c, char **tok, int n, const char *name, int line, dp_error *err)
{
    long long k;
    double v;
    int i;
    dp_kind kd;
    int lo = 0, hi = c->n - 1, np = n - 3, curve = 0;
    dp_speed_point pts[DP_MAX_CURVE];
    if (!c->n) return dp__fail(err, DP_ERR_PARSE, "%s:%d: 'kindspeed' before 'devices N'", name, line);
    if (n < 4) return dp__fail(err, DP_ERR_PARSE, "%s:%d: expected 'kindspeed DEVICE|all KIND SPEED' or 'kindspeed DEVICE|all KIND WORK:SPEED ...'", name, line);
    if (strcmp(tok[1], "all") != 0) {
        if (dp__int(tok[1], 0, c->n - 1, &k)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: device index '%s' not in 0..%d", name, line, tok[1], c->n - 1);
        lo = hi = (int)k;
    }
    if (dp_kind_parse(tok[2], &kd)) return dp__fail(err, DP_ERR_PARSE, "%s:%d: unknown op kind '%s'", name, line, tok[2]);
    for (i = 3; i < n; i++) curve |= strchr(tok[i], ':') != NULL;
    if (!curve) {
        if (n != 4) return dp__fail(err, DP_ERR_PARSE, "%s:%d: kindspeed: one SPEED or WORK:SPEED points, found %d values", name, line, n - 3);
        if (dp__num(tok[3], &v, 0) || v <= 0) return dp__fail(err, DP_ERR_RANGE, "%s:%d: kindspeed '%s' must be a positive number", name, line, tok[3]);
        for (i = lo; i <= hi; i++) {
            c->kind_speed[(size_t)i * DP_KIND__COUNT + kd] = v;
            c->curve_len[(size_t)i * DP_KIND__COUNT + kd] = 0;
        }
        return 0;
    }
    if (np > DP_MAX_CURVE) return dp__fail(err, DP_ERR_LIMIT, "%s:%d: kindspeed curve of %d points (limit %d)", name, line, np, DP_MAX_CURVE);
    for (i = 0; i < np; i++) {
        char *tk = tok[3 + i], *colon = strchr(tk, ':');
        int rw, rs;
        if (!colon) return dp__fail(err, DP_ERR_PARSE, "%s:%d: kindspeed point '%s' is not WORK:SPEED", name, line, tk);
        *colon = 0;
        rw = dp__num(tk, &pts[i].work, 0);
        rs = dp__num(colon + 1, &pts[i].speed, 0);
        *colon = ':';
        if (rw == -1 || rs == -1) return dp__fail(err, DP_ERR_PARSE, "%s:%d: kindspeed point '%s' is not WORK:SPEED", name, line, tk);
        if (rw || rs || !(pts[i].work > 0) || !(pts[i].speed > 0)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: kindspeed point '%s': work and speed must be positive and finite", name, line, tk);
        if (i > 0 && !(pts[i].work > pts[i - 1].work)) return dp__fail(err, DP_ERR_RANGE, "%s:%d: kindspeed point '%s': work must increase along the curve", name, line, tk);
    }
    for (i = lo; i <= hi; i++) {
        size_t at = (size_t)i * DP_KIND__COUNT + kd;
        memcpy(c->curve + at * DP_MAX_CURVE, pts, sizeof(dp_speed_point) * (size_t)np);
        c->curve_len[at] = np;
        c->kind_speed[at] = 0;
    }
    return 0;
}

DPDEF int dp_cluster_read_mem(dp_cluster *c, const char *buf, size_t len, const char *name, dp_error *err)
{
    dp__text t;
    char *tok[DP__CL_TOKENS];
    int used[DP__CL_TOKENS];
    int rc = 0, r, header = 0, i, counts_line = 0, ended = 0;
    long long want = 0;       /* a counts line's devices */
    double speed = 1, bw = 1, lat = 0, mem = 0, ovh = 0;
    memset(c, 0, sizeof *c);
    if (!name) name = "<memory>";
    if (len > DP_MAX_FILE_BYTES) return dp__fail(err, DP_ERR_LIMIT, "%s: %zu bytes exceed the limit of %zu (DP_MAX_FILE_BYTES)", name, len, (size_t)DP_MAX_FILE_BYTES);
    dp__skip_bom(&buf, &len);
    if ((rc = dp__text_init(&t, buf, len, name, 0, err))) return rc;
    while ((r = dp__text_line(&t, 1)) > 0) {
        int n = dp__split(t.buf, tok, DP__CL_TOKENS);
        double v;
        long long k;
        if (n == 0) continue;
        if (n > DP__CL_TOKENS) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: too many fields", name, t.line); goto done; }
        memset(used, 0, sizeof used);
        used[0] = 1;
        if (!header) {
            if (strcmp(tok[0], "doppler-cluster") != 0) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: expected 'doppler-cluster 1', found '%s'", name, t.line, tok[0]); goto done; }
            if (n != 2 || dp__int(tok[1], 0, INT_MAX, &k) || k != 1) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: unsupported version '%s' (this reader knows 1)", name, t.line, n > 1 ? tok[1] : ""); goto done; }
            header = 1;
            continue;
        }
        if (ended) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: '%s' after the 'end' line", name, t.line, tok[0]); goto done; }
        if (strcmp(tok[0], "counts") == 0) {   /* a file that declares its devices ends with 'end' */
            if (counts_line || c->n || n != 2 || strncmp(tok[1], "devices=", 8) != 0 ||
                dp__count(tok[1] + 8, 1, DP_MAX_DEVICES, &want, DP_ERR_PARSE)) {
                rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: expected 'counts devices=N' (once, before 'devices', N in 1..%d)", name, t.line, DP_MAX_DEVICES);
                goto done;
            }
            counts_line = t.line;
            continue;
        }
        if (strcmp(tok[0], "end") == 0) {
            if (!counts_line || n != 1) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: 'end' %s", name, t.line, n != 1 ? "takes no fields" : "without a 'counts' line"); goto done; }
            ended = 1;
            continue;
        }
        if (strcmp(tok[0], "devices") == 0) {
            if (c->n) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: 'devices' given twice", name, t.line); goto done; }
            dp_code bad = n != 2 ? DP_ERR_RANGE : dp__count(tok[1], 1, DP_MAX_DEVICES, &k, DP_ERR_RANGE);
            if (bad) { rc = dp__fail(err, bad, "%s:%d: device count '%s' not in 1..%d (DP_MAX_DEVICES)", name, t.line, n > 1 ? tok[1] : "", DP_MAX_DEVICES); goto done; }
            if ((rc = dp_cluster_homogeneous(c, (int)k, speed, bw, lat, err))) goto done;
            for (i = 0; i < c->n; i++) { c->memory[i] = mem; c->overhead[i] = ovh; }
            continue;
        }
        if (strcmp(tok[0], "link") == 0) {
            if (n == 2 && strcmp(tok[1], "free") == 0) c->link = DP_LINK_FREE;
            else if (n == 2 && strcmp(tok[1], "serial") == 0) c->link = DP_LINK_SERIAL;
            else { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: link model '%s' unknown (free or serial)", name, t.line, n > 1 ? tok[1] : ""); goto done; }
            continue;
        }
        if (strcmp(tok[0], "overhead") == 0) {
            if (n != 2 || dp__num(tok[1], &v, 0) != 0) {
                rc = dp__fail(err, DP_ERR_RANGE, "%s:%d: overhead '%s' must be a finite non-negative number", name, t.line, n > 1 ? tok[1] : "");
                goto done;
            }
            ovh = v;
            for (i = 0; i < c->n; i++) c->overhead[i] = v;
            continue;
        }
        if (strcmp(tok[0], "speed") == 0 || strcmp(tok[0], "bandwidth") == 0 || strcmp(tok[0], "latency") == 0 || strcmp(tok[0], "memory") == 0) {
            int positive = tok[0][0] == 's' || tok[0][0] == 'b';
            if (n != 2 || (r = dp__num(tok[1], &v, 0)) != 0 || (positive && v <= 0)) {
                rc = dp__fail(err, DP_ERR_RANGE, "%s:%d: %s '%s' must be a %s number", name, t.line, tok[0], n > 1 ? tok[1] : "", positive ? "positive" : "finite non-negative");
                goto done;
            }
            if (c->n) {
                int a, b;
                for (a = 0; a < c->n; a++) {
                    if (tok[0][0] == 's') c->speed[a] = v;
                    if (tok[0][0] == 'm') c->memory[a] = v;
                    for (b = 0; b < c->n; b++) {
                        if (tok[0][0] == 'b') c->bandwidth[a * c->n + b] = v;
                        if (tok[0][0] == 'l' && a != b) c->latency[a * c->n + b] = v;
                    }
                }
            }
            if (tok[0][0] == 's') speed = v;
            else if (tok[0][0] == 'b') bw = v;
            else if (tok[0][0] == 'l') lat = v;
            else mem = v;
            continue;
        }
        if (strcmp(tok[0], "device") == 0 || strcmp(tok[0], "pair") == 0) {
            if ((rc = dp__cl_device_line(c, tok, n, used, name, t.line, err))) goto done;
            continue;
        }
        if (strcmp(tok[0], "nodes") == 0 || strcmp(tok[0], "internode") == 0) {
            if ((rc = dp__cl_nodes_line(c, tok, n, used, name, t.line, err))) goto done;
            continue;
        }
        if (strcmp(tok[0], "kindspeed") == 0) {
            if ((rc = dp__cl_kindspeed_line(c, tok, n, name, t.line, err))) goto done;
            continue;
        }
        rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: unknown key '%s' (expected devices, link, speed, bandwidth, latency, memory, overhead, device, pair, kindspeed, nodes, internode, counts, end)", name, t.line, tok[0]);
        goto done;
    }
    if (r < 0) { rc = dp__fail(err, DP_ERR_NOMEM, "%s: out of memory", name); goto done; }
    if (!header) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: empty file (expected 'doppler-cluster 1')", name, t.line > 0 ? t.line : 1); goto done; }
    if (counts_line && !ended) {
        rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: truncated: the file ends without its 'end' line (line %d declares %lld devices)", name, t.line, counts_line, want);
        goto done;
    }
    if (!c->n) { rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: no 'devices N' line", name, t.line); goto done; }
    if (counts_line && c->n != want) {
        rc = dp__fail(err, DP_ERR_PARSE, "%s:%d: 'devices %d', but line %d declares %lld", name, t.line, c->n, counts_line, want);
        goto done;
    }
done:
    dp__text_free(&t);
    if (rc) dp_cluster_free(c);
    return rc;
}

DPDEF int dp_cluster_read(dp_cluster *c, const char *path, dp_error *err)
{
    char *buf;
    size_t len;
    int rc;
    memset(c, 0, sizeof *c);
    if ((rc = dp__slurp(path, &buf, &len, err))) return rc;
    rc = dp_cluster_read_mem(c, buf, len, path, err);
    DP_FREE(buf);
    return rc;
}

/* Whether kind k's speed (single or curve) is the same on every device. */
static int dp__cl_kind_uniform(const dp_cluster *c, int k)
{
    int a, i;
    for (a = 1; a < c->n; a++) {
        size_t p = (size_t)a * DP_KIND__COUNT + k, q = (size_t)k;
        int len = c->curve_len ? c->curve_len[p] : 0;
        if (c->kind_speed[p] != c->kind_speed[q] || len != (c->curve_len ? c->curve_len[q] : 0)) return 0;
        for (i = 0; i < len; i++)
            if (c->curve[p * DP_MAX_CURVE + i].work != c->curve[q * DP_MAX_CURVE + i].work ||
                c->curve[p * DP_MAX_CURVE + i].speed != c->curve[q * DP_MAX_CURVE + i].speed) return 0;
    }
    return 1;
}

static void dp__cl_write_kind(FILE *f, const dp_cluster *c, int a, int k, const char *dev)
{
    size_t p = (size_t)a * DP_KIND__COUNT + k;
    int len = c->curve_len ? c->curve_len[p] : 0, i;
    if (len > 0) {
        fprintf(f, "kindspeed %s %s", dev, dp_kind_name((dp_kind)k));
        for (i = 0; i < len; i++) fprintf(f, " %.17g:%.17g", c->curve[p * DP_MAX_CURVE + i].work, c->curve[p * DP_MAX_CURVE + i].speed);
        fprintf(f, "\n");
    } else if (c->kind_speed[p] > 0) {
        fprintf(f, "kindspeed %s %s %.17g\n", dev, dp_kind_name((dp_kind)k), c->kind_speed[p]);
    }
}

DPDEF int dp_cluster_write(const dp_cluster *c, const char *path, dp_error *err)
{
    dp__out o;
    int rc, a, b, k;
    char dev[16];
    if ((rc = dp__out_open(&o, path, err))) return rc;
    fprintf(o.f, "doppler-cluster 1\ncounts devices=%d\ndevices %d\nlink %s\n", c->n, c->n, c->link == DP_LINK_SERIAL ? "serial" : "free");
    for (a = 0; a < c->n; a++) {
        fprintf(o.f, "device %d name=%s speed=%.17g memory=%.17g", a, c->name[a], c->speed[a], c->memory[a]);
        if (c->overhead && c->overhead[a] > 0) fprintf(o.f, " overhead=%.17g", c->overhead[a]);
        if (c->node && c->node[a] > 0) fprintf(o.f, " node=%d", c->node[a]);
        fprintf(o.f, "\n");
    }
    if (c->kind_speed)
        for (k = 0; k < DP_KIND__COUNT; k++) {
            if (dp__cl_kind_uniform(c, k)) { dp__cl_write_kind(o.f, c, 0, k, "all"); continue; }
            for (a = 0; a < c->n; a++) { snprintf(dev, sizeof dev, "%d", a); dp__cl_write_kind(o.f, c, a, k, dev); }
        }
    for (a = 0; a < c->n; a++)
        for (b = 0; b < c->n; b++)
            if (a != b) fprintf(o.f, "pair %d %d bandwidth=%.17g latency=%.17g\n", a, b, c->bandwidth[a * c->n + b], c->latency[a * c->n + b]);
    fputs("end\n", o.f);
    return dp__out_close(&o, 0, err);
}

DPDEF int dp_cluster_set_curve(dp_cluster *c, int dev, dp_kind kind, const dp_speed_point *pts, int n, dp_error *err)
{
    int i, lo = dev, hi = dev;
    if (!c || c->n < 1 || !c->kind_speed || !c->curve || !c->curve_len) return dp__fail(err, DP_ERR_ARG, "set_curve: cluster missing or not made by dp_cluster_homogeneous/read");
    if (dev >= c->n) return dp__fail(err, DP_ERR_RANGE, "set_curve: device %d not in 0..%d", dev, c->n - 1);
    if ((int)kind < 0 || kind >= DP_KIND__COUNT) return dp__fail(err, DP_ERR_RANGE, "set_curve: op kind %d unknown", (int)kind);
    if (n < 0 || n > DP_MAX_CURVE) return dp__fail(err, DP_ERR_LIMIT, "set_curve: %d points (limit %d)", n, DP_MAX_CURVE);
    if (n > 0 && !pts) return dp__fail(err, DP_ERR_ARG, "set_curve: no points given");
    for (i = 0; i < n; i++) {
        if (!(pts[i].work > 0 && pts[i].work < HUGE_VAL && pts[i].speed > 0 && pts[i].speed < HUGE_VAL))
            return dp__fail(err, DP_ERR_RANGE, "set_curve: %s point %d (%g:%g): work and speed must be positive and finite", dp_kind_name(kind), i, pts[i].work, pts[i].speed);
        if (i > 0 && !(pts[i].work > pts[i - 1].work))
            return dp__fail(err, DP_ERR_RANGE, "set_curve: %s point %d: work %g does not increase", dp_kind_name(kind), i, pts[i].work);
    }
    if (dev < 0) { lo = 0; hi = c->n - 1; }
    for (i = lo; i <= hi; i++) {
        size_t at = (size_t)i * DP_KIND__COUNT + kind;
        if (n) memcpy(c->curve + at * DP_MAX_CURVE, pts, sizeof(dp_speed_point) * (size_t)n);
        c->curve_len[at] = n;
        c->kind_speed[at] = 0;
    }
    return 0;
}

DPDEF int dp_cluster_scale_speed(dp_cluster *c, int dev, double factor, dp_error *err)
{
    int d, k, i, lo = dev, hi = dev;
    if (!c || c->n < 1 || !c->speed) return dp__fail(err, DP_ERR_ARG, "scale_speed: cluster missing or without devices");
    if (dev >= c->n) return dp__fail(err, DP_ERR_RANGE, "scale_speed: device %d not in 0..%d", dev, c->n - 1);
    if (!(factor > 0 && factor < HUGE_VAL)) return dp__fail(err, DP_ERR_RANGE, "scale_speed: factor %g is not positive and finite", factor);
    if (dev < 0) { lo = 0; hi = c->n - 1; }
    for (d = lo; d <= hi; d++) {
        c->speed[d] *= factor;
        for (k = 0; k < DP_KIND__COUNT && c->kind_speed; k++) {
            size_t at = (size_t)d * DP_KIND__COUNT + k;
            c->kind_speed[at] *= factor;
            if (c->curve && c->curve_len)
                for (i = 0; i < c->curve_len[at]; i++) c->curve[at * DP_MAX_CURVE + i].speed *= factor;
        }
    }
    return 0;
}

DPDEF int dp_check(const dp_graph *g, const dp_cluster *c, dp_error *err)
{
    int a, b;
    if (!g || !g->finalized) return dp__fail(err, DP_ERR_ARG, "graph missing or not finalised");
    if (!c || c->n < 1) return dp__fail(err, DP_ERR_ARG, "cluster missing or without devices");
    if (g->n_dev_time && c->n > g->n_dev_time)
        return dp__fail(err, DP_ERR_RANGE, "graph gives per-device times for %d devices but the cluster has %d", g->n_dev_time, c->n);
    for (a = 0; a < c->n; a++)
        for (b = 0; b < c->n; b++)
            if (a != b && !(1.0 / c->bandwidth[a * c->n + b] < HUGE_VAL))
                return dp__fail(err, DP_ERR_RANGE, "link %d -> %d: bandwidth %g is too small (its inverse, the time per byte, is not finite)",
                                a, b, c->bandwidth[a * c->n + b]);
    return dp__check_times(g, c, 0, err);
}

/* Speed of curve p (n >= 1 points) at work w: linear in ln w between the
   points around w, the end speeds outside. */
static double dp__curve_speed(const dp_speed_point *p, int n, double w)
{
    int lo = 0, hi = n - 1;
    double f;
    if (w <= p[0].work) return p[0].speed;
    if (w >= p[n - 1].work) return p[n - 1].speed;
    while (hi - lo > 1) { int mid = (lo + hi) / 2; if (p[mid].work <= w) lo = mid; else hi = mid; }
    f = log(w / p[lo].work) / log(p[hi].work / p[lo].work);
    return p[lo].speed + f * (p[hi].speed - p[lo].speed);
}

DPDEF double dp_op_time(const dp_graph *g, const dp_cluster *c, int op, int dev)
{
    double s = c->speed[dev], w = g->compute[op];
    if (g->n_dev_time) {
        double t = g->dev_time[(size_t)op * g->n_dev_time + dev];
        if (t >= 0) return t;
    }
    if (c->kind_speed) {
        size_t at = (size_t)dev * DP_KIND__COUNT + g->kind[op];
        if (c->curve_len && c->curve_len[at] > 0) s = dp__curve_speed(c->curve + at * DP_MAX_CURVE, c->curve_len[at], w);
        else if (c->kind_speed[at] > 0) s = c->kind_speed[at];
    }
    return (c->overhead ? c->overhead[dev] : 0.0) + w / s;
}

/* The width of a table of op times (dp_op_time's of every op on every
   device) as the simulator and the placers keep it: c->n columns, op v's
   time on device d at v n + d; or one column, op v's at v, where every
   device gives every op the same time: no per-device times in the graph,
   and every device's speed, overhead, per-kind speeds and speed curves
   the same, bit for bit (so dp_op_time's arithmetic is the same for each).
   A cluster of identical devices, the common case, then keeps 8 bytes an
   op where it kept 8 n (24 more an op on four devices were a tenth of
   the learned placer's memory on a chain). */
static int dp__times_width(const dp_graph *g, const dp_cluster *c)
{
    int d, k;
    if (g->n_dev_time) return c->n;
    for (d = 1; d < c->n; d++) {
        if (memcmp(&c->speed[d], &c->speed[0], sizeof(double))) return c->n;
        if (c->overhead && memcmp(&c->overhead[d], &c->overhead[0], sizeof(double))) return c->n;
        for (k = 0; k < DP_KIND__COUNT && c->kind_speed; k++) {
            size_t at = (size_t)d * DP_KIND__COUNT + k;
            if (memcmp(&c->kind_speed[at], &c->kind_speed[k], sizeof(double))) return c->n;
            if (c->curve_len && c->curve_len[at] != c->curve_len[k]) return c->n;
            if (c->curve_len && c->curve_len[k] > 0 &&
                memcmp(c->curve + at * DP_MAX_CURVE, c->curve + (size_t)k * DP_MAX_CURVE, (size_t)c->curve_len[k] * sizeof *c->curve))
                return c->n;
        }
    }
    return 1;
}

/* Op v's time on device d from a table of width w (dp__times_width). */
DP__INLINE double dp__otime(const double *t, int w, int v, int d) { return t[(size_t)v * w + (w > 1 ? d : 0)]; }

/* Fill t (width w) with dp_op_time's of every op. */
static void dp__times_fill(const dp_graph *g, const dp_cluster *c, double *t, int w)
{
    int v, d;
    for (v = 0; v < g->n_ops; v++)
        for (d = 0; d < w; d++) t[(size_t)v * w + d] = dp_op_time(g, c, v, d);
}

DPDEF double dp_xfer_time(const dp_cluster *c, double bytes, int from, int to)
{
    if (from == to) return 0.0;
    return c->latency[from * c->n + to] + bytes / c->bandwidth[from * c->n + to];
}

DPDEF int dp_fastest_device(const dp_graph *g, const dp_cluster *c, int op)
{
    int d, best = 0;
    for (d = 1; d < c->n; d++)
        if (dp_op_time(g, c, op, d) < dp_op_time(g, c, op, best)) best = d;
    return best;
}

/* ======================================================================
   >>runtime
   The runtime model (THE RUNTIME MODEL above) as one state machine,
   dp__rt: the inputs still to arrive per op, one ready queue per device
   (dp__rt_before, the dispatch rule), the op running on each device and
   the devices that may start one, the serial links, the consumers still
   holding each output, and each device's bytes. It never blocks and reads
   no clock: a driver hands it each completion with its time, and it
   launches ops and issues copies through the driver. Two drivers:
   - simulated time (>>simulator, dp_sim_run): a launch schedules the op's
     end at t + its time, a copy the copy's arrival at the modelled end of
     its transfer (or, where nothing reads the copies' events, only its
     consumer's readiness at its latest input: dp__rt_input, one event an
     op and not one a copy);
     the clock, one event heap on (time, push order), pops every event at
     the earliest time;
   - real completions (>>dispatch, dp_dispatch and the executors): launch,
     copy and release are the executor's hooks (dp_dispatch_hooks), its
     wait returns completions, and the copy of an opaque op is held until
     its modelled arrival (the dl heap).
   The functions that handle an event take the driver as the constant
   argument sim (1: simulated time, 0: hooks), so that each driver's loop
   compiles to its own code: the simulator's has no indirect call.
   Devices that may start an op (one ended there, or one became ready
   there) are kept on a stack, is_dirty marking those on it; a launch pass
   takes them latest first, which fixes the order in which ops start at
   one instant, and so the order of the simulator's events at equal times.
   Memory: the same events count in both, in different bytes. The
   simulator counts the graph's (an op's out_bytes and, while it runs, its
   mem_bytes; a copy's edge bytes) when track_memory, and samples the peak
   once every event and launch at an instant is applied (frees at t come
   before allocations at t); with hooks the executor's buffers are counted
   (dp_exec_op_bytes, dp_exec_edge_bytes) against the arena, the peak at
   every allocation, and each buffer is released through the hook.
   ====================================================================== */
static int dp__is_real(const dp_graph *g, int v) { return g->kind[v] != DP_OP_OPAQUE; }

/* A set of devices (at most DP_MAX_DEVICES): 4 words of bits. */
#define DP__DSET_WORDS ((DP_MAX_DEVICES + 63) / 64)
#define DP__DSET_HAS(set, d) (((set)[(d) >> 6] >> ((d) & 63)) & 1u)
#define DP__DSET_ADD(set, d) ((set)[(d) >> 6] |= (uint64_t)1 << ((d) & 63))

/* Adds the resident bytes of placement assign to bytes[]: each op's own on
   its device, each weight once on every device of an op that uses it. */
static void dp__resident_add(const dp_graph *g, const int *assign, double *bytes)
{
    int v, w, k;
    for (v = 0; v < g->n_ops; v++) bytes[assign[v]] += g->resident[v];
    for (w = 0; w < g->n_weights; w++) {
        uint64_t held[DP__DSET_WORDS] = {0};
        for (k = g->wop_off[w]; k < g->wop_off[w + 1]; k++) {
            int d = assign[g->wop[k]];
            if (!DP__DSET_HAS(held, d)) { DP__DSET_ADD(held, d); bytes[d] += g->weight_bytes[w]; }
        }
    }
}

/* The functions that handle an event are DP__INLINE: each driver's loop
   gets its own copy of them, with sim a constant (left to itself, gcc -O2
   kept them out of line: 12% more instructions per simulation than the
   simulator's own loop had). */

typedef struct dp__event { double t; uint32_t seq; int id; } dp__event; /* id >= 0: op ends; id < 0: edge -id-1 arrives */

typedef struct dp__rt {
    const dp_graph *g; const dp_cluster *c; const int *assign;
    int n, m, nd;
    dp_order order; const double *prio;
    int *pending;                 /* [n] inputs still to arrive                   */
    int *refcnt;                  /* [n] consumers still holding the output       */
    double *ready;                /* [n] when the op became ready                 */
    int *q, *qoff, *qlen;         /* ready queues: device d's heap is
                                     q[qoff[d] .. qoff[d] + qlen[d])             */
    int *running;                 /* [nd] op running, or -1                       */
    int *dirty, ndirty;           /* devices that may start an op: a stack        */
    char *is_dirty;               /* [nd] on the stack                            */
    double *link_free;            /* [nd*nd] SERIAL: when the link is free        */
    double *cur, *peak;           /* [nd] bytes held now, and at most             */
    double *bl; int have_bl;      /* [n] b-level, the default priority, made once */
    int track;                    /* count bytes (hooks: always)                  */
    int rec;                      /* simulated: record the transfers (xfers)      */
    int ndone;                    /* ops done                                     */
    int inflight;                 /* ops running and copies under way             */
    /* simulated time (dp_sim_run) */
    dp_sim *s;                    /* the results: start, end, busy, xfers         */
    const double *op_time;        /* dp_op_time's, [n otw] (its own, or the
                                     learned placers' table:
                                     dp__sim_init_times)                       */
    int otw;                      /* its width: nd, or 1 (dp__times_width)     */
    dp__event *ev; int nev; uint32_t seq;   /* the event heap                     */
    double makespan;
    double *left;                 /* [nd] a run with a stop bound (dp__sim_run):
                                     each device's work not yet started        */
    int merge;                    /* simulated, bytes not counted, copies not
                                     recorded, free links: a copy's arrival is
                                     no event of its own (dp__rt_input)         */
    /* hooks (dp_dispatch, the executors) */
    double spu, limit;            /* seconds per time unit; arena bytes (0: the
                                     cluster's memory)                           */
    double bscale;                /* bytes per byte of the graph's (exec)         */
    double *resid;                /* [nd] resident bytes of the placement, held
                                     all run (exec: in buffer bytes)             */
    size_t *obytes, *ebytes;      /* each op's output and edge's copy:
                                     dp_exec_op_bytes, dp_exec_edge_bytes         */
    char *xstate;                 /* per edge: 0 none, 1 copying, 2 copied, 3 delivered */
    double *arrive;               /* [m] a copy's modelled arrival                */
    int *dl, ndl;                 /* copies held until it: a heap on (arrive, edge) */
    int *done;                    /* [n + m] dp_dispatch's completions            */
    const unsigned char *remote;  /* [nd] or NULL: devices another process runs
                                     (dp_exec_mpi): not held to the arena here  */
    void *arena;                  /* every buffer above: one block                */
} dp__rt;

/* The dispatch rule, "a before b" in a device's ready queue: higher
   priority first (PRIORITY), then earlier ready, then lower index. */
DP__INLINE int dp__rt_before(const dp__rt *w, int a, int b)
{
    if (w->order == DP_ORDER_PRIORITY && w->prio[a] != w->prio[b]) return w->prio[a] > w->prio[b];
    if (w->ready[a] != w->ready[b]) return w->ready[a] < w->ready[b];
    return a < b;
}

/* The event heap: by time, ties in the order pushed. */
DP__INLINE int dp__ev_before(const void *ctx, dp__event a, dp__event b)
{
    (void)ctx;
    return a.t < b.t || (a.t == b.t && a.seq < b.seq);
}

DP__INLINE void dp__ev_push(dp__rt *w, double t, int id)
{
    dp__event e;
    e.t = t; e.seq = w->seq++; e.id = id;
    DP__HEAP_PUSH(dp__event, w->ev, w->nev, e, dp__ev_before, NULL);
}

/* Copies held until their modelled arrival: a min-heap on (arrival, edge). */
static int dp__dl_before(const dp__rt *w, int a, int b) { return w->arrive[a] < w->arrive[b] || (w->arrive[a] == w->arrive[b] && a < b); }

static void dp__rt_free(dp__rt *w) { DP_FREE(w->arena); w->arena = NULL; }

/* The state for g on c (checked by the caller), one block: for the
   simulator when s is given (its results are carved in the same block,
   the op times cached, or optime's read where given: dp_op_time's
   [n w], w = dp__times_width, kept by the caller while s lives), else for hooks with opts'
   scales (already the executors' defaults, dp_exec_scales) and arena. */
static int dp__rt_init(dp__rt *w, const dp_graph *g, const dp_cluster *c, dp_sim *s, const double *optime,
                       const dp_exec_opts *opts, dp_error *err)
{
    double *own = NULL;
    dp__arena ar;
    int rc, v, pass, n = g->n_ops, m = g->n_edges, nd = c->n;
    memset(&ar, 0, sizeof ar);
    memset(w, 0, sizeof *w);
    w->g = g; w->c = c; w->s = s;
    w->otw = dp__times_width(g, c);
    w->n = n; w->m = m; w->nd = nd;
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &w->arena, err, s ? "simulator workspace" : "dispatcher"))) return rc;
        DP__A(w->pending, n, int); DP__A(w->refcnt, n, int); DP__A(w->ready, n, double);
        if (!s) DP__A(w->bl, n, double);
        DP__A(w->q, n, int); DP__A(w->qoff, nd + 1, int); DP__A(w->qlen, nd, int); DP__A(w->running, nd, int);
        DP__A(w->dirty, nd, int); DP__A(w->is_dirty, nd, char);
        DP__A(w->link_free, (size_t)nd * nd, double); DP__A(w->cur, nd, double); DP__A(w->peak, nd, double);
        DP__A(w->resid, nd, double);
        if (s) {
            /* the event heap, the b-levels and the copies' records last: a
               simulation touches only the heap's first pages where
               nothing reads the order of events (one event an op), the
               b-levels only where it orders by them (no priorities given),
               the records only where copies are recorded */
            DP__A(w->left, nd, double);
            if (!optime) DP__A(own, (size_t)n * w->otw, double);
            DP__A(s->start, n, double); DP__A(s->end, n, double); DP__A(s->busy, nd, double);
            dp__arena_sparse(&ar);
            DP__A(w->ev, (size_t)n + m + 1, dp__event); DP__A(w->bl, n, double); DP__A(s->xfers, m, dp_xfer);
        } else {
            DP__A(w->obytes, n, size_t); DP__A(w->ebytes, m, size_t); DP__A(w->xstate, m, char);
            DP__A(w->arrive, m, double); DP__A(w->dl, m, int); DP__A(w->done, (size_t)n + m, int);
        }
    }
    if (s) {
        s->peak_bytes = w->peak;
        if (own) dp__times_fill(g, c, own, w->otw);
        w->op_time = own ? own : optime;
    } else {
        w->spu = opts->seconds_per_unit; w->limit = opts->device_bytes; w->track = 1; w->bscale = opts->bytes_scale;
        for (v = 0; v < n; v++) w->obytes[v] = dp_exec_op_bytes(g, v, opts->bytes_scale);
        for (v = 0; v < m; v++) w->ebytes[v] = dp_exec_edge_bytes(g, v, opts->bytes_scale);
    }
    return 0;
}

/* The placement (assign, checked by the caller) and the order's priority
   (NULL: b-level); the ready queues: one array split by the number of
   ops each device holds. */
static void dp__rt_plan(dp__rt *w, const int *assign, dp_order order, const double *prio)
{
    int v, d;
    w->assign = assign; w->order = order; w->prio = prio;
    if (order == DP_ORDER_PRIORITY && !prio) {
        if (!w->have_bl) { dp_blevel(w->g, w->c, w->bl); w->have_bl = 1; }
        w->prio = w->bl;
    }
    memset(w->qoff, 0, sizeof(int) * ((size_t)w->nd + 1));
    for (v = 0; v < w->n; v++) w->qoff[assign[v] + 1]++;
    for (d = 0; d < w->nd; d++) w->qoff[d + 1] += w->qoff[d];
    /* resident bytes, counted from the start when bytes are (only then:
       the simulator's hot path does not pay for it) */
    for (d = 0; d < w->nd; d++) w->resid[d] = 0;
    if (w->track) {
        dp__resident_add(w->g, assign, w->resid);
        if (!w->s) for (d = 0; d < w->nd; d++) w->resid[d] = w->resid[d] > 0 ? floor(w->resid[d] * w->bscale + 0.5) : 0;
    }
}

/* With hooks: DP_ERR_INFEASIBLE when a device's resident bytes alone pass
   its arena (before anything runs). */
static int dp__rt_resident_fits(const dp__rt *w, dp_error *err)
{
    int d;
    for (d = 0; d < w->nd; d++) {
        double limit = w->limit > 0 ? w->limit : w->c->memory ? w->c->memory[d] : 0;
        if (limit > 0 && w->resid[d] > limit)
            return dp__fail(err, DP_ERR_INFEASIBLE, "exec: device %d: its resident bytes (weights), %.0f, pass its arena of %.0f", d, w->resid[d], limit);
    }
    return 0;
}

/* Device d may start an op. */
DP__INLINE void dp__rt_wake(dp__rt *w, int d)
{
    if (!w->is_dirty[d]) { w->is_dirty[d] = 1; w->dirty[w->ndirty++] = d; }
}

/* Op v is ready at time t. */
DP__INLINE void dp__rt_push(dp__rt *w, int v, double t)
{
    int d = w->assign[v];
    w->ready[v] = t;
    DP__HEAP_PUSH(int, w->q + w->qoff[d], w->qlen[d], v, dp__rt_before, w);
    dp__rt_wake(w, d);
}

/* A merged run (w->merge): one input of op v is settled at time t; it
   comes at time at (its producer ended at t = at, or its copy arrives
   then). v is ready at the latest of its inputs (kept in ready[v] until
   then; one event says when, if later than t), not at the last of one
   event per copy (a heap push and pop per cross-device edge): the same
   time, and the same place in its device's queue (dp__rt_before's order
   is total). The events at one instant then come in another order, which
   changes nothing else where nothing else reads it: not with bytes
   counted (the copies' buffers are freed at their arrivals), copies
   recorded (in the order issued) or serial links (the copies issued at
   one instant queue in that order). */
DP__INLINE void dp__rt_input(dp__rt *w, int v, double at, double t)
{
    if (at > w->ready[v]) w->ready[v] = at;
    if (--w->pending[v] == 0) {
        if (w->ready[v] > t) dp__ev_push(w, w->ready[v], -1 - v);
        else dp__rt_push(w, v, t);
    }
}

/* A new run at time t: nothing running or held, the sources ready. */
static void dp__rt_reset(dp__rt *w, double t)
{
    const dp_graph *g = w->g;
    int v, d;
    for (d = 0; d < w->nd; d++) { w->qlen[d] = 0; w->running[d] = -1; w->is_dirty[d] = 0; w->cur[d] = w->peak[d] = w->resid[d]; }
    if (w->c->link == DP_LINK_SERIAL) for (d = 0; d < w->nd * w->nd; d++) w->link_free[d] = 0;
    if (w->xstate) memset(w->xstate, 0, (size_t)w->m);
    w->ndirty = w->ndone = w->inflight = w->ndl = w->nev = 0;
    w->seq = 0;
    w->makespan = 0;
    for (v = 0; v < w->n; v++) { w->pending[v] = g->in_off[v + 1] - g->in_off[v]; w->refcnt[v] = g->out_off[v + 1] - g->out_off[v]; w->ready[v] = t; }
    for (v = 0; v < w->n; v++) if (w->pending[v] == 0) dp__rt_push(w, v, t);
}

/* bytes come to device d: with hooks against the arena (past it:
   DP_ERR_INFEASIBLE), the peak kept at once; simulated, only counted. */
DP__INLINE int dp__rt_alloc(dp__rt *w, int d, double bytes, const char *what, int id, const int sim, dp_error *err)
{
    if (!sim && !(w->remote && w->remote[d])) {
        double limit = w->limit > 0 ? w->limit : w->c->memory ? w->c->memory[d] : 0;
        if (limit > 0 && w->cur[d] + bytes > limit)
            return dp__fail(err, DP_ERR_INFEASIBLE, "exec: device %d arena full: %s %d needs %.0f bytes, %.0f of %.0f in use", d, what, id, bytes, w->cur[d], limit);
    }
    w->cur[d] += bytes;
    if (!sim && w->cur[d] > w->peak[d]) w->peak[d] = w->cur[d];
    return 0;
}

/* The last consumer of op u's output is done with it: freed. */
DP__INLINE int dp__rt_free_op(dp__rt *w, const dp_dispatch_hooks *h, int u, const int sim, dp_error *err)
{
    w->cur[w->assign[u]] -= sim ? w->g->out_bytes[u] : (double)w->obytes[u];
    return sim ? 0 : h->release(h->ctx, u, -1, err);
}

/* Every device that may start an op, latest first, starts its first ready
   one if it is idle: the op's bytes counted (its output; simulated, with
   its workspace), then launched; simulated, its end is scheduled at
   t + its time. */
DP__INLINE int dp__rt_launch_ready(dp__rt *w, const dp_dispatch_hooks *h, double t, const int sim, dp_error *err)
{
    int d, v, rc;
    while (w->ndirty > 0) {
        d = w->dirty[--w->ndirty];
        w->is_dirty[d] = 0;
        if (w->running[d] >= 0 || w->qlen[d] == 0) continue;
        DP__HEAP_POP(int, w->q + w->qoff[d], w->qlen[d], v, dp__rt_before, w);
        if (w->track && (rc = dp__rt_alloc(w, d, sim ? w->g->out_bytes[v] + w->g->mem_bytes[v] : (double)w->obytes[v], "op", v, sim, err))) return rc;
        if (sim) {
            dp_sim *s = w->s;
            s->start[v] = t;
            s->end[v] = t + dp__otime(w->op_time, w->otw, v, d);
            w->left[d] -= dp__otime(w->op_time, w->otw, v, d);
            dp__ev_push(w, s->end[v], v);
        } else if ((rc = h->launch(h->ctx, v, d, err))) return rc;
        w->running[d] = v;
        w->inflight++;
    }
    return 0;
}

/* The copy of edge e from device d to dd, its producer ended at t: issued
   at t or, on a SERIAL link, when the pair's previous transfer ends, it
   arrives latency + bytes / bandwidth later (times spu with hooks).
   Simulated, it is recorded (xfers) and its arrival scheduled (a merged
   run: given to its consumer, dp__rt_input); with hooks
   the copy hook starts it, and it is delivered at its modelled arrival,
   or, out of a real op, when it is done. */
DP__INLINE int dp__rt_copy(dp__rt *w, const dp_dispatch_hooks *h, int e, int d, int dd, double t, const int sim, dp_error *err)
{
    double st = t, dur = dp_xfer_time(w->c, w->g->bytes[e], d, dd);
    if (!sim) dur *= w->spu;
    if (w->c->link == DP_LINK_SERIAL) {
        double *lf = &w->link_free[(size_t)d * w->nd + dd];
        if (*lf > st) st = *lf;
        *lf = st + dur;
    }
    w->inflight++;
    if (sim) {
        if (w->rec) {
            dp_xfer *xf = &w->s->xfers[w->s->n_xfers++];
            xf->edge = e; xf->from = d; xf->to = dd; xf->start = st; xf->end = st + dur;
        }
        if (w->merge) dp__rt_input(w, w->g->dst[e], st + dur, t);
        else dp__ev_push(w, st + dur, -e - 1);
        return 0;
    }
    w->arrive[e] = dp__is_real(w->g, w->g->src[e]) ? 0 : st + dur;
    w->xstate[e] = 1;
    return h->copy(h->ctx, e, err);
}

/* Op v ended at time t on its device, which may start another: its
   inputs are freed where this was their last use (simulated: and its
   workspace), its local consumers get an input, its remote ones a copy
   (its bytes counted on the destination). */
DP__INLINE int dp__rt_op_done(dp__rt *w, const dp_dispatch_hooks *h, int v, double t, const int sim, dp_error *err)
{
    const dp_graph *g = w->g;
    int d = w->assign[v], k, rc;
    w->running[d] = -1;
    dp__rt_wake(w, d);
    w->ndone++;
    if (sim) {
        dp_sim *s = w->s;
        s->busy[d] += s->end[v] - s->start[v];
        if (s->end[v] > w->makespan) w->makespan = s->end[v];
    }
    if (w->track) {
        if (sim) w->cur[d] -= g->mem_bytes[v];
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k], u = g->src[e];
            if (w->assign[u] != d) {                        /* the copy */
                w->cur[d] -= sim ? g->bytes[e] : (double)w->ebytes[e];
                if (!sim && (rc = h->release(h->ctx, -1, e, err))) return rc;
            } else if (--w->refcnt[u] == 0 && (rc = dp__rt_free_op(w, h, u, sim, err))) return rc;   /* the original */
        }
    }
    for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
        int e = g->out_edge[k], x = g->dst[e], dd = w->assign[x];
        if (sim) {   /* the consumer and bytes of an edge ahead */
            int ea = g->out_edge[k + DP__AHEAD < g->out_off[v + 1] ? k + DP__AHEAD : k];
            DP__PREFETCH(&g->dst[ea]);
            DP__PREFETCH(&g->bytes[ea]);
        }
        if (dd == d) {
            if (sim && w->merge) dp__rt_input(w, x, t, t);
            else if (--w->pending[x] == 0) dp__rt_push(w, x, t);
            continue;
        }
        if (w->track && (rc = dp__rt_alloc(w, dd, sim ? g->bytes[e] : (double)w->ebytes[e], "copy of edge", e, sim, err))) return rc;
        if ((rc = dp__rt_copy(w, h, e, d, dd, t, sim, err))) return rc;
    }
    return 0;
}

/* Edge e's copy has arrived at time t: its consumer has one input more. */
DP__INLINE void dp__rt_deliver(dp__rt *w, int e, double t, const int sim)
{
    int v = w->g->dst[e];
    if (!sim) w->xstate[e] = 3;
    if (--w->pending[v] == 0) dp__rt_push(w, v, t);
}

/* One completion at time t: op id >= 0 ended, or edge -1 - id's copy is
   done (its source freed where that was the last use, then delivered, or,
   with hooks, held until its modelled arrival); in a merged run op
   -1 - id's last input has come instead. With hooks,
   anything not in flight is refused; simulated events are the runtime's
   own. */
DP__INLINE int dp__rt_complete(dp__rt *w, const dp_dispatch_hooks *h, int id, double t, const int sim, dp_error *err)
{
    int e = -1 - id, rc;
    if (id >= 0) {
        if (!sim && !(id < w->n && w->running[w->assign[id]] == id))
            return dp__fail(err, DP_ERR_ARG, "dispatch: completion %d is of no op in flight", id);
        w->inflight--;
        return dp__rt_op_done(w, h, id, t, sim, err);
    }
    if (sim && w->merge) { dp__rt_push(w, e, t); return 0; }
    if (!sim && !(e < w->m && w->xstate[e] == 1))
        return dp__fail(err, DP_ERR_ARG, "dispatch: completion %d is of no copy in flight", id);
    w->inflight--;
    if (!sim) w->xstate[e] = 2;
    if (w->track && --w->refcnt[w->g->src[e]] == 0 && (rc = dp__rt_free_op(w, h, w->g->src[e], sim, err))) return rc;
    if (sim || w->arrive[e] <= t) dp__rt_deliver(w, e, t, sim);
    else DP__HEAP_PUSH(int, w->dl, w->ndl, e, dp__dl_before, w);
    return 0;
}

/* ======================================================================
   >>simulator
   The runtime model (>>runtime) driven by simulated time: every buffer
   lives in the workspace made by dp_sim_init (a dp__rt and the results,
   one block); dp_sim_run starts every idle device that has a ready op,
   samples the peaks, moves the clock to the earliest event and applies
   every event at that time, in push order, until none is left.
   ====================================================================== */
DPDEF void dp_sim_free(dp_sim *s)
{
    dp__rt *w;
    if (!s) return;
    w = (dp__rt *)s->dp__ws;
    if (w) { dp__rt_free(w); DP_FREE(w); }
    memset(s, 0, sizeof *s);
}

/* dp_sim_init, the op times read from optime (dp_op_time's [n w], w =
   dp__times_width, kept by the caller while s lives) where given: the
   learned placers' table, not a copy per simulator. */
static int dp__sim_init_times(dp_sim *s, const dp_graph *g, const dp_cluster *c, const double *optime, dp_error *err)
{
    dp__rt *w;
    int rc;
    memset(s, 0, sizeof *s);
    if ((rc = dp_check(g, c, err))) return rc;
    s->g = g; s->c = c;
    w = (dp__rt *)dp__alloc(1, sizeof *w, err, "simulator");
    if (!w) return DP_ERR_NOMEM;
    s->dp__ws = w;
    if ((rc = dp__rt_init(w, g, c, s, optime, NULL, err))) { dp_sim_free(s); return rc; }
    return 0;
}

DPDEF int dp_sim_init(dp_sim *s, const dp_graph *g, const dp_cluster *c, dp_error *err)
{
    return dp__sim_init_times(s, g, c, NULL, err);
}

/* The simulated clock's wait: it moves to the earliest event's time t and
   applies every event at t in push order (those pushed at t meanwhile
   too: a copy that takes no time); returns t. */
static double dp__sim_step(dp__rt *w)
{
    double t = w->ev[0].t;
    while (w->nev > 0 && w->ev[0].t == t) {
        dp__event e;
        DP__HEAP_POP(dp__event, w->ev, w->nev, e, dp__ev_before, NULL);
        (void)dp__rt_complete(w, NULL, e.id, t, 1, NULL);   /* simulated: no hook, no arena, cannot fail */
    }
    return t;
}

/* Whether the run can no longer end by time stop: a device's op running
   (ending then) or its idle time now, plus its work not yet started
   (its ops run one at a time) passes it. */
static int dp__sim_past(const dp__rt *w, double t, double stop)
{
    int d;
    for (d = 0; d < w->nd; d++)
        if ((w->running[d] >= 0 ? w->s->end[w->running[d]] : t) + w->left[d] > stop) return 1;
    return 0;
}

/* dp_sim_run that gives up (0, makespan HUGE_VAL, not counted in runs)
   as soon as the makespan must pass stop (HUGE_VAL: never): the learned
   placers' samples, which a makespan above the best so far cannot make
   the answer, stop there instead of simulating to the end. The bound's
   own rounding (the work left is a running difference of n op times:
   at most about 2n ulps of stop) never stops a run that ends by stop. */
static int dp__sim_run(dp_sim *s, const int *assign, const dp_sim_opts *opts, double stop, dp_error *err)
{
    static const dp_sim_opts defaults = { DP_ORDER_FIFO, NULL, 0, 0 };
    dp__rt *w = (dp__rt *)s->dp__ws;
    const dp_graph *g = s->g;
    int n, nd, v, d, k;
    double t = 0;
    if (!w) return dp__fail(err, DP_ERR_ARG, "simulator not initialised (call dp_sim_init)");
    if (!opts) opts = &defaults;
    n = w->n; nd = w->nd;
    for (v = 0; v < n; v++)
        if (assign[v] < 0 || assign[v] >= nd)
            return dp__fail(err, DP_ERR_RANGE, "assignment: op %d ('%s') on device %d, but the cluster has devices 0..%d", v, g->name[v], assign[v], nd - 1);
    w->s = s;
    w->track = opts->track_memory;
    w->rec = !opts->no_xfers;
    w->merge = !w->track && !w->rec && s->c->link == DP_LINK_FREE;
    dp__rt_plan(w, assign, opts->order, opts->priority);
    for (d = 0; d < nd; d++) s->busy[d] = w->left[d] = 0;
    for (v = 0; v < n; v++) s->start[v] = s->end[v] = 0;
    if (stop < HUGE_VAL) {
        for (v = 0; v < n; v++) w->left[assign[v]] += dp__otime(w->op_time, w->otw, v, assign[v]);
        stop += (2.0 * n + 4) * DBL_EPSILON * fabs(stop);
    }
    s->n_xfers = 0;
    dp__rt_reset(w, t);
    for (;;) {
        /* every idle device that has a ready op starts one at t */
        (void)dp__rt_launch_ready(w, NULL, t, 1, NULL);   /* simulated: cannot fail */
        if (w->track) for (d = 0; d < nd; d++) if (w->cur[d] > w->peak[d]) w->peak[d] = w->cur[d];
        if (stop < HUGE_VAL && dp__sim_past(w, t, stop)) { s->makespan = HUGE_VAL; return 0; }
        if (w->nev == 0) break;
        t = dp__sim_step(w);
    }
    if (w->ndone != n) return dp__fail(err, DP_ERR_GRAPH, "simulation ended with %d of %d ops run (graph not finalised?)", w->ndone, n);
    if (!(w->makespan < HUGE_VAL)) {
        /* dp_check (at dp_sim_init) bounds every finish time; a cluster
           changed since then can still overflow: name the first op in
           topological order that ends at a time that is not finite */
        for (k = 0; k < n && s->end[g->topo[k]] < HUGE_VAL; k++) {}
        v = g->topo[k < n ? k : n - 1];
        return dp__fail(err, DP_ERR_RANGE, "op '%s' (node %d) on device %d finishes at %g, not a finite time (the cluster changed since dp_sim_init?)",
                        g->name[v], v, assign[v], s->end[v]);
    }
    s->makespan = w->makespan;
    s->memory_tracked = w->track;
    s->runs++;
    return 0;
}

DPDEF int dp_sim_run(dp_sim *s, const int *assign, const dp_sim_opts *opts, dp_error *err)
{
    return dp__sim_run(s, assign, opts, HUGE_VAL, err);
}

DPDEF int dp_simulate(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_sim_opts *opts, double *makespan, dp_error *err)
{
    dp_sim s;
    int rc = dp_sim_init(&s, g, c, err);
    if (rc) return rc;
    rc = dp_sim_run(&s, assign, opts, err);
    if (!rc && makespan) *makespan = s.makespan;
    dp_sim_free(&s);
    return rc;
}

/* ======================================================================
   >>analysis
   ====================================================================== */
/* Mean op time over devices, and the two constants of the mean transfer
   time over ordered pairs of distinct devices: lat + bytes * inv_bw. */
static double dp__mean_time(const dp_graph *g, const dp_cluster *c, int v)
{
    double s = 0;
    int d;
    for (d = 0; d < c->n; d++) s += dp_op_time(g, c, v, d);
    return s / c->n;
}

static void dp__mean_link(const dp_cluster *c, double *lat, double *inv_bw)
{
    int a, b, n = c->n;
    double sl = 0, sb = 0;
    *lat = *inv_bw = 0;
    if (n < 2) return;
    for (a = 0; a < n; a++)
        for (b = 0; b < n; b++)
            if (a != b) { sl += c->latency[a * n + b]; sb += 1.0 / c->bandwidth[a * n + b]; }
    *lat = sl / ((double)n * (n - 1));
    *inv_bw = sb / ((double)n * (n - 1));
}

/* Whether every link between two devices has the same latency and
   bandwidth (so a transfer's time depends on its bytes alone); not with
   fewer than two devices. */
static int dp__links_alike(const dp_cluster *c)
{
    int k, n = c->n;
    if (n < 2) return 0;
    for (k = 0; k < n * n; k++)
        if (k / n != k % n && (c->latency[k] != c->latency[1] || c->bandwidth[k] != c->bandwidth[1])) return 0;
    return 1;
}

DPDEF int dp_blevel(const dp_graph *g, const dp_cluster *c, double *out)
{
    double lat, ibw;
    int i, k;
    if (!g->finalized) return DP_ERR_ARG;
    dp__mean_link(c, &lat, &ibw);
    for (i = g->n_ops - 1; i >= 0; i--) {
        int v = g->topo[i];
        double best = 0;
        for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
            int e = g->out_edge[k];
            double x = (c->n > 1 ? lat + g->bytes[e] * ibw : 0) + out[g->dst[e]];
            if (x > best) best = x;
        }
        out[v] = dp__mean_time(g, c, v) + best;
    }
    return 0;
}

/* The t-level, with each op's mean time from mt where given (the same
   values as dp__mean_time's: dp__gctx_init keeps them), else made per
   edge (no memory of its own). */
static void dp__tlevel(const dp_graph *g, const dp_cluster *c, const double *mt, double *out)
{
    double lat, ibw;
    int i, k;
    dp__mean_link(c, &lat, &ibw);
    for (i = 0; i < g->n_ops; i++) {
        int v = g->topo[i];
        double best = 0;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k], u = g->src[e];
            double x = out[u] + (mt ? mt[u] : dp__mean_time(g, c, u)) + (c->n > 1 ? lat + g->bytes[e] * ibw : 0);
            if (x > best) best = x;
        }
        out[v] = best;
    }
}

DPDEF int dp_tlevel(const dp_graph *g, const dp_cluster *c, double *out)
{
    if (!g->finalized) return DP_ERR_ARG;
    dp__tlevel(g, c, NULL, out);
    return 0;
}

/* Longest path of fastest-device times (no communication), total fastest
   work, and the depth in ops; no allocation beyond one array. */
static int dp__bounds(const dp_graph *g, const dp_cluster *c, double *cp, double *work, int *depth)
{
    double *f = (double *)DP_MALLOC(sizeof(double) * (size_t)g->n_ops);
    int *lv = (int *)DP_MALLOC(sizeof(int) * (size_t)g->n_ops);
    int i, k;
    *cp = *work = 0; *depth = 0;
    if (!f || !lv) { DP_FREE(f); DP_FREE(lv); return DP_ERR_NOMEM; }
    for (i = 0; i < g->n_ops; i++) {
        int v = g->topo[i];
        double best = 0, tv = dp_op_time(g, c, v, dp_fastest_device(g, c, v));
        int bl = 0;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int u = g->src[g->in_edge[k]];
            if (f[u] > best) best = f[u];
            if (lv[u] > bl) bl = lv[u];
        }
        f[v] = best + tv;
        lv[v] = bl + 1;
        *work += tv;
        if (f[v] > *cp) *cp = f[v];
        if (lv[v] > *depth) *depth = lv[v];
    }
    *work /= c->n;
    DP_FREE(f); DP_FREE(lv);
    return 0;
}

/* dp_lower_bound that reports running out of memory. */
static int dp__lower_bound(const dp_graph *g, const dp_cluster *c, double *lb, dp_error *err)
{
    double cp, work;
    int depth;
    *lb = 0;
    if (dp__bounds(g, c, &cp, &work, &depth)) return dp__fail(err, DP_ERR_NOMEM, "out of memory computing the lower bound (%d ops)", g->n_ops);
    *lb = cp > work ? cp : work;
    return 0;
}

DPDEF double dp_lower_bound(const dp_graph *g, const dp_cluster *c)
{
    double cp, work;
    int depth;
    if (!g->finalized || dp__bounds(g, c, &cp, &work, &depth)) return 0;
    return cp > work ? cp : work;
}

DPDEF int dp_graph_stats(const dp_graph *g, const dp_cluster *c, dp_stats *out)
{
    int i, rc;
    memset(out, 0, sizeof *out);
    if (!g->finalized) return DP_ERR_ARG;
    out->nodes = g->n_ops; out->edges = g->n_edges;
    for (i = 0; i < g->n_ops; i++) {
        out->sources += g->in_off[i + 1] == g->in_off[i];
        out->sinks += g->out_off[i + 1] == g->out_off[i];
        out->total_compute += g->compute[i];
    }
    for (i = 0; i < g->n_edges; i++) out->total_bytes += g->bytes[i];
    if ((rc = dp__bounds(g, c, &out->cp_length, &out->work_bound, &out->depth))) return rc;
    out->lower_bound = out->cp_length > out->work_bound ? out->cp_length : out->work_bound;
    /* finite after dp_check (dp_graph_finalize bounds the totals) */
    if (!(out->total_compute < HUGE_VAL && out->total_bytes < HUGE_VAL && out->lower_bound < HUGE_VAL)) return DP_ERR_RANGE;
    return 0;
}

DPDEF int dp_resident_memory(const dp_graph *g, const dp_cluster *c, const int *assign, double *bytes)
{
    int d;
    for (d = 0; d < c->n; d++) bytes[d] = 0;
    dp__resident_add(g, assign, bytes);
    return 0;
}

DPDEF int dp_static_memory(const dp_graph *g, const dp_cluster *c, const int *assign, double *bytes)
{
    int v, e;
    for (v = 0; v < c->n; v++) bytes[v] = 0;
    for (v = 0; v < g->n_ops; v++) bytes[assign[v]] += g->out_bytes[v] + g->mem_bytes[v];
    for (e = 0; e < g->n_edges; e++)
        if (assign[g->src[e]] != assign[g->dst[e]]) bytes[assign[g->dst[e]]] += g->bytes[e];
    dp__resident_add(g, assign, bytes);
    return 0;
}

/* The first device whose bytes[] pass its memory (a relative 1e-12 of
   rounding allowed), or -1 when none does. */
static int dp__over_memory(const dp_cluster *c, const double *bytes)
{
    int d;
    for (d = 0; d < c->n; d++) if (c->memory[d] > 0 && bytes[d] > c->memory[d] * (1 + 1e-12)) return d;
    return -1;
}

DPDEF int dp_sim_check_memory(const dp_sim *s, dp_error *err)
{
    int d;
    const dp_cluster *c = s->c;
    if (!c || !s->peak_bytes) return dp__fail(err, DP_ERR_ARG, "memory check: no simulation run");
    if ((d = dp__over_memory(c, s->peak_bytes)) >= 0)
        return dp__fail(err, DP_ERR_INFEASIBLE, "memory: device %d peaks at %.6g bytes, over its memory of %.6g (the placement does not fit)",
                        d, s->peak_bytes[d], c->memory[d]);
    return 0;
}

/* ======================================================================
   >>placers
   ====================================================================== */
#define DP__METHOD_TEXT(id, text) text,
static const char *const dp__method_names[] = { DP_METHODS(DP__METHOD_TEXT) };
#undef DP__METHOD_TEXT

DPDEF const char *dp_method_name(dp_method m) { return dp__name_of(dp__method_names, DP_METHOD__COUNT, (int)m); }

DPDEF int dp_method_parse(const char *name, dp_method *out)
{
    int i = dp__name_index(dp__method_names, DP_METHOD__COUNT, name);
    if (i >= 0) *out = (dp_method)i;
    return i < 0 ? -1 : 0;
}

/* ---- memory capacity ---------------------------------------------------- */
static int dp__limited(const dp_cluster *c)
{
    int d;
    for (d = 0; d < c->n; d++) if (c->memory[d] > 0) return 1;
    return 0;
}

/* The static memory (dp_static_memory) of a placement built op by op,
   each op after its inputs: bytes per device, and for each weight the
   devices that hold it already (a weight costs only its first op on a
   device). used [nd], held [n_weights * DP__DSET_WORDS], both zeroed. */
typedef struct dp__mem { const dp_graph *g; const dp_cluster *c; double *used; uint64_t *held; } dp__mem;

/* Bytes that placing v on d adds to d, given its placed predecessors. */
static double dp__mem_cost(const dp__mem *m, const int *assign, int v, int d)
{
    const dp_graph *g = m->g;
    double b = g->out_bytes[v] + g->mem_bytes[v] + g->resident[v];
    int k;
    for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
        int e = g->in_edge[k];
        if (assign[g->src[e]] != d) b += g->bytes[e];
    }
    if (g->wuse_off)
        for (k = g->wuse_off[v]; k < g->wuse_off[v + 1]; k++) {
            int w = g->wuse[k];
            if (!DP__DSET_HAS(m->held + (size_t)w * DP__DSET_WORDS, d)) b += g->weight_bytes[w];
        }
    return b;
}

static int dp__fits(const dp_cluster *c, const double *used, int d, double extra)
{
    return c->memory[d] <= 0 || used[d] + extra <= c->memory[d] * (1 + 1e-12);
}

static int dp__mem_fits(const dp__mem *m, const int *assign, int v, int d)
{
    return m->c->memory[d] <= 0 || dp__fits(m->c, m->used, d, dp__mem_cost(m, assign, v, d));
}

/* v goes to d (assign[v] is set by the caller). */
static void dp__mem_place(dp__mem *m, const int *assign, int v, int d)
{
    const dp_graph *g = m->g;
    int k;
    m->used[d] += dp__mem_cost(m, assign, v, d);
    if (g->wuse_off)
        for (k = g->wuse_off[v]; k < g->wuse_off[v + 1]; k++) DP__DSET_ADD(m->held + (size_t)g->wuse[k] * DP__DSET_WORDS, d);
}

static size_t dp__mem_words(const dp_graph *g) { return (size_t)g->n_weights * DP__DSET_WORDS; }

static int dp__all_fit(const dp_graph *g, const dp_cluster *c, const int *assign, double *scratch)
{
    if (!dp__limited(c)) return 1;   /* (nothing to count: the graph's memory fields are not read) */
    dp_static_memory(g, c, assign, scratch);
    return dp__over_memory(c, scratch) < 0;
}

/* DP_ERR_INFEASIBLE: op v fits on no device; the message names it and
   every device's room (the first 8). */
static int dp__infeasible(const dp__mem *m, const int *assign, int v, dp_error *err)
{
    const dp_cluster *c = m->c;
    char room[256];
    size_t at = 0;
    int d;
    room[0] = 0;
    for (d = 0; d < c->n && d < 8 && at < sizeof room; d++) {
        int k = snprintf(room + at, sizeof room - at, "%s%d: %.4g of %.4g free, needs %.4g", d ? "; " : "", d,
                         c->memory[d] > 0 ? c->memory[d] - m->used[d] : HUGE_VAL, c->memory[d] > 0 ? c->memory[d] : HUGE_VAL,
                         dp__mem_cost(m, assign, v, d));
        if (k < 0) break;
        at += (size_t)k;
    }
    if (at < sizeof room && d < c->n) snprintf(room + at, sizeof room - at, "; ...");
    return dp__fail(err, DP_ERR_INFEASIBLE, "memory: op '%s' (node %d) fits on no device (%s): no feasible placement found", m->g->name[v], v, room);
}

/* ---- single, round-robin, random ---------------------------------------- */
/* The single device that runs the whole graph fastest and holds it all
   (-1 when none does), and assign[] filled with it; optime: dp_op_time's
   [n w], w = dp__times_width, where the caller has them (NULL: made
   here). */
static int dp__best_single(const dp_graph *g, const dp_cluster *c, const double *optime, int *assign, double *scratch)
{
    int d, v, best = -1, w = dp__times_width(g, c);
    double best_t = 0;
    for (d = 0; d < c->n; d++) {
        double tt = 0;
        for (v = 0; v < g->n_ops; v++) { assign[v] = d; tt += optime ? dp__otime(optime, w, v, d) : dp_op_time(g, c, v, d); }
        if (!dp__all_fit(g, c, assign, scratch)) continue;
        if (best < 0 || tt < best_t) { best = d; best_t = tt; }
    }
    for (v = 0; v < g->n_ops; v++) assign[v] = best;
    return best;
}

static int dp__place_simple(dp_method m, const dp_graph *g, const dp_cluster *c, uint64_t seed, int *assign, dp_error *err)
{
    int n = g->n_ops, nd = c->n, i, v, d, rc = 0;
    double *used = (double *)dp__alloc((size_t)nd, sizeof(double), err, "placer");
    int *fit = (int *)dp__alloc((size_t)nd, sizeof(int), err, "placer");
    uint64_t *held = (uint64_t *)dp__alloc(dp__mem_words(g) + 1, sizeof(uint64_t), err, "placer");
    dp__mem mem;
    dp_rng rng;
    if (!used || !fit || !held) { rc = DP_ERR_NOMEM; goto done; }
    mem.g = g; mem.c = c; mem.used = used; mem.held = held;
    dp_rng_seed(&rng, seed);
    if (m == DP_METHOD_SINGLE) {
        /* the device that runs everything fastest and holds it all */
        int best = dp__best_single(g, c, NULL, assign, used);
        if (best < 0) { rc = dp__fail(err, DP_ERR_INFEASIBLE, "no single device can hold all %d ops", n); goto done; }
        for (v = 0; v < n; v++) assign[v] = best;
        goto done;
    }
    for (v = 0; v < n; v++) assign[v] = -1;
    for (i = 0; i < n; i++) {
        int nf = 0;
        v = g->topo[i];
        for (d = 0; d < nd; d++) if (dp__mem_fits(&mem, assign, v, d)) fit[nf++] = d;
        if (nf == 0) { rc = dp__infeasible(&mem, assign, v, err); goto done; }
        if (m == DP_METHOD_ROUND_ROBIN) {
            /* device i mod N, or the next one round that fits */
            int want = i % nd, k;
            d = fit[0];
            for (k = 0; k < nd; k++) {
                int cand = (want + k) % nd, j;
                for (j = 0; j < nf; j++) if (fit[j] == cand) break;
                if (j < nf) { d = cand; break; }
            }
        } else {
            d = fit[dp_rng_int(&rng, nf)];
        }
        dp__mem_place(&mem, assign, v, d);
        assign[v] = d;
    }
done:
    DP_FREE(used); DP_FREE(fit); DP_FREE(held);
    return rc;
}

/* ---- list scheduling: cp and heft ------------------------------------- */
/* Time v's inputs are all on device d, given placed predecessors. */
static double dp__inputs_ready(const dp_graph *g, const dp_cluster *c, const int *assign, const double *finish, int v, int d)
{
    double r = 0;
    int k;
    for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
        int e = g->in_edge[k], u = g->src[e];
        double x = finish[u] + dp_xfer_time(c, g->bytes[e], assign[u], d);
        if (x > r) r = x;
    }
    return r;
}

/* heft's idle gaps. Each device's ops, in order of start (an op joins
   after those starting at or before it), are the keys of a treap: a
   binary search tree by start, heap-ordered by a hash of the op, so
   expected O(log ops) deep whatever the order of insertion. With s(k)
   the k-th op's start, f(k) its finish and P(k) = max f(1..k) (P(0) = 0),
   an op ready at r taking w goes into the first k where
   max(r, P(k-1)) + w <= s(k), at that max, else at max(r, P(last)):
   HEFT's insertion policy (the earliest gap that holds it, which is
   also where its finish is earliest on the device). P is nondecreasing
   along the order, so the ops with P(k-1) <= r come first: among them
   the test is r + w <= s(k), and s is nondecreasing too, so only the
   last of them need be tried; after them it is P(k-1) + w <= s(k), a
   gap of at least w, which the subtree maxima of the gaps s(k) - P(k-1)
   find in one descent. Ops are nodes 0..n-1 (an op is in one device's
   tree): O(ops) memory, O(log ops) a query or an insertion, where a scan
   of the device's ops made heft quadratic on long chains. The float
   comparisons are the scan's own, so the placements are the same. */
typedef struct dp__gaps {
    const double *s, *f;    /* every op's start and finish (the scheduler's) */
    int *l, *r, *root;      /* children (-1: none); per device, its tree     */
    double *pb;             /* P(k-1): the latest finish of the ops before    */
    double *mg, *mpb, *mf;  /* subtree maxima of s - pb, of pb and of f       */
} dp__gaps;

static uint32_t dp__gp_pri(int v)   /* a fixed hash: the heap order */
{
    uint32_t x = (uint32_t)v * 0x9E3779B1u;
    x ^= x >> 16; x *= 0x85EBCA6Bu; x ^= x >> 13; x *= 0xC2B2AE35u; x ^= x >> 16;
    return x;
}

static void dp__gp_pull(dp__gaps *t, int x)
{
    double mg = t->s[x] - t->pb[x], mpb = t->pb[x], mf = t->f[x];
    int c, i;
    for (i = 0; i < 2; i++) {
        if ((c = i ? t->r[x] : t->l[x]) < 0) continue;
        if (t->mg[c] > mg) mg = t->mg[c];
        if (t->mpb[c] > mpb) mpb = t->mpb[c];
        if (t->mf[c] > mf) mf = t->mf[c];
    }
    t->mg[x] = mg; t->mpb[x] = mpb; t->mf[x] = mf;
}

/* the ops of tree x starting at or before s into *a, the rest into *b */
static void dp__gp_split(dp__gaps *t, int x, double s, int *a, int *b)
{
    if (x < 0) { *a = *b = -1; return; }
    if (t->s[x] <= s) { dp__gp_split(t, t->r[x], s, &t->r[x], b); *a = x; }
    else { dp__gp_split(t, t->l[x], s, a, &t->l[x]); *b = x; }
    dp__gp_pull(t, x);
}

static int dp__gp_merge(dp__gaps *t, int a, int b)   /* a's ops all before b's */
{
    if (a < 0) return b;
    if (b < 0) return a;
    if (dp__gp_pri(a) > dp__gp_pri(b)) { t->r[a] = dp__gp_merge(t, t->r[a], b); dp__gp_pull(t, a); return a; }
    t->l[b] = dp__gp_merge(t, a, t->l[b]);
    dp__gp_pull(t, b);
    return b;
}

static void dp__gp_set_first_pb(dp__gaps *t, int x, double pb)   /* x's first op's P(k-1) */
{
    if (t->l[x] >= 0) dp__gp_set_first_pb(t, t->l[x], pb);
    else t->pb[x] = pb;
    dp__gp_pull(t, x);
}

/* the first op of tree x with pb > ready and pb + w <= s; -1 if none.
   Pruned by the maxima: no op past ready, or no gap near w (a margin
   of 1e-12 of the times keeps every op the exact test would take). */
static int dp__gp_first(const dp__gaps *t, int x, double ready, double w)
{
    int y;
    if (x < 0 || t->mpb[x] <= ready || t->mg[x] < w - 1e-12 * (t->mf[x] + w)) return -1;
    if ((y = dp__gp_first(t, t->l[x], ready, w)) >= 0) return y;
    if (t->pb[x] > ready && t->pb[x] + w <= t->s[x]) return x;
    return dp__gp_first(t, t->r[x], ready, w);
}

/* The start of an op ready at ready taking w on device d (see dp__gaps). */
static double dp__gp_start(const dp__gaps *t, int d, double ready, double w)
{
    int x = t->root[d], c = -1, y;
    while (x >= 0) {   /* the last op with P(k-1) <= ready */
        if (t->pb[x] <= ready) { c = x; x = t->r[x]; } else x = t->l[x];
    }
    if (c >= 0 && ready + w <= t->s[c]) return ready;
    if ((y = dp__gp_first(t, t->root[d], ready, w)) >= 0) return t->pb[y];
    x = t->root[d];
    return x >= 0 && t->mf[x] > ready ? t->mf[x] : ready;
}

/* v (its start and finish set) into device d's tree */
static void dp__gp_insert(dp__gaps *t, int d, int v)
{
    int a, b;
    double p;
    dp__gp_split(t, t->root[d], t->s[v], &a, &b);
    p = a >= 0 && t->mf[a] > 0 ? t->mf[a] : 0;
    t->l[v] = t->r[v] = -1;
    t->pb[v] = p;
    dp__gp_pull(t, v);
    if (b >= 0) dp__gp_set_first_pb(t, b, t->f[v] > p ? t->f[v] : p);
    t->root[d] = dp__gp_merge(t, dp__gp_merge(t, a, v), b);
}

/* insertion == 0: cp (earliest start, after the device's last op).
   insertion == 1: heft (earliest finish, first idle gap that fits). */
static int dp__list_schedule(const dp_graph *g, const dp_cluster *c, int insertion, int *assign, int *order,
                             double *start, double *finish, double *length, dp_error *err)
{
    int n = g->n_ops, nd = c->n, k, v, d, rc = 0, placed = 0, pass;
    double *bl, *st, *fin, *avail, *used;
    uint64_t *held;
    dp__mem mem;
    int *pend;
    int *out = assign;   /* written only on success */
    void *block = NULL;
    dp__opheap q;
    dp__gaps gp;
    dp__arena ar;
    double len = 0;
    size_t ng = insertion ? (size_t)n : 0;   /* heft's gap trees */
    memset(&ar, 0, sizeof ar);
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &block, err, "list scheduler"))) return rc;
        DP__A(bl, n, double); DP__A(st, n, double); DP__A(fin, n, double);
        DP__A(avail, nd, double); DP__A(used, nd, double); DP__A(pend, n, int);
        DP__A(gp.l, ng, int); DP__A(gp.r, ng, int); DP__A(gp.root, nd, int);
        DP__A(gp.pb, ng, double); DP__A(gp.mg, ng, double); DP__A(gp.mpb, ng, double); DP__A(gp.mf, ng, double);
        DP__A(q.h, n, int); DP__A(assign, n, int);
        DP__A(held, dp__mem_words(g), uint64_t);
    }
    gp.s = st; gp.f = fin;
    for (d = 0; d < nd; d++) gp.root[d] = -1;
    mem.g = g; mem.c = c; mem.used = used; mem.held = held;
    q.n = 0; q.key = bl;
    dp_blevel(g, c, bl);
    for (v = 0; v < n; v++) {
        assign[v] = -1;
        pend[v] = g->in_off[v + 1] - g->in_off[v];
        if (!pend[v]) dp__oh_push(&q, v);
    }
    while (q.n > 0) {
        int best_d = -1;
        double best_s = 0, best_f = 0;
        v = dp__oh_pop(&q);
        for (d = 0; d < nd; d++) {
            double ready = dp__inputs_ready(g, c, assign, fin, v, d), w = dp_op_time(g, c, v, d), s;
            if (!dp__mem_fits(&mem, assign, v, d)) continue;
            if (!insertion) {
                s = ready > avail[d] ? ready : avail[d];
                if (best_d < 0 || s < best_s) { best_d = d; best_s = s; best_f = s + w; }
            } else {
                s = dp__gp_start(&gp, d, ready, w);
                if (best_d < 0 || s + w < best_f) { best_d = d; best_s = s; best_f = s + w; }
            }
        }
        if (best_d < 0) { rc = dp__infeasible(&mem, assign, v, err); goto done; }
        d = best_d;
        dp__mem_place(&mem, assign, v, d);
        assign[v] = d;
        st[v] = best_s; fin[v] = best_f;
        if (best_f > len) len = best_f;
        if (best_f > avail[d]) avail[d] = best_f;
        if (insertion) dp__gp_insert(&gp, d, v);
        pend[v] = placed++;   /* v is done: reuse its counter for its rank */
        for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
            int x = g->dst[g->out_edge[k]];
            if (--pend[x] == 0) dp__oh_push(&q, x);
        }
    }
    memcpy(out, assign, sizeof(int) * (size_t)n);
    if (order) for (v = 0; v < n; v++) order[pend[v]] = v;
    if (start) memcpy(start, st, sizeof(double) * (size_t)n);
    if (finish) memcpy(finish, fin, sizeof(double) * (size_t)n);
    if (length) *length = len;
done:
    DP_FREE(block);
    return rc;
}

DPDEF int dp_place_cp(const dp_graph *g, const dp_cluster *c, int *assign, int *order, double *schedule_length, dp_error *err)
{
    int rc = dp_check(g, c, err);
    return rc ? rc : dp__list_schedule(g, c, 0, assign, order, NULL, NULL, schedule_length, err);
}

DPDEF int dp_place_heft(const dp_graph *g, const dp_cluster *c, int *assign, double *start, double *finish,
                        double *schedule_length, dp_error *err)
{
    int rc = dp_check(g, c, err);
    return rc ? rc : dp__list_schedule(g, c, 1, assign, NULL, start, finish, schedule_length, err);
}

/* ---- enumopt and anneal: search scored by the simulator ---------------- */
/* A search's clock. It looks at the time every `every` simulations
   (about every 65536 ops simulated: every 64 simulations on small graphs,
   every one on a graph that large), to report progress at most once a
   second and to stop at the deadline (dp_now seconds; 0: none). */
typedef struct dp__clock {
    long   every;
    double deadline, next_report;
} dp__clock;

static void dp__clock_init(dp__clock *k, const dp_graph *g, double deadline, int report)
{
    long w = 65536L / ((long)g->n_ops + g->n_edges + 1);
    k->every = w < 1 ? 1 : w > 64 ? 64 : w;
    k->deadline = deadline;
    k->next_report = report ? dp_now() + 1 : 0;
}

/* After simulation number sims: opts->progress when a second has passed
   since the last report; 1 (and *stopped set) once the deadline has
   passed. Neither changes the search: only where it stops. */
static int dp__clock_tick(dp__clock *k, const dp_place_opts *o, long sims, long total, double best, int *stopped)
{
    double now;
    if ((!o->progress && k->deadline <= 0) || sims % k->every) return 0;
    now = dp_now();
    if (o->progress && now >= k->next_report) {
        k->next_report = now + 1;
        o->progress(o->progress_ctx, sims, total, best);
    }
    if (k->deadline > 0 && now >= k->deadline) { *stopped = 1; return 1; }
    return 0;
}

/* A move's lower bound. The searches move one op v to another device d
   and simulate the result; the runtime only adds waits to the longest
   path (op times on their devices, transfers between devices) and a
   device runs one op at a time, so no simulation of the moved placement
   ends before the longest path through v or d's work with v. With tl[u]
   the longest path to u's end and bl[y] the longest from y's start to
   the graph's end, both under the placement the levels were made for,
   v's device changes neither for an input u (it precedes v) nor for a
   successor y (it follows v), so the path through v on d is
       max over inputs (tl[u] + transfer u -> v) + time(v, d)
         + max over successors (transfer v -> y + bl[y]),
   O(v's edges) against a simulation's O(ops + edges). The levels stay
   valid for every move of the op that differs from their placement
   (enumopt's inner loop) and are made again, O(ops + edges), when another
   op has moved. The bound is taken 1e-9 low (the sums run in another
   order than the simulator's, within n ulps), so that a move it decides
   is one the simulation would decide the same way. */
typedef struct dp__mbound {
    const dp_graph *g;
    const dp_cluster *c;
    const double *w;    /* op times: the simulator's (dp__rt.op_time) */
    int ww;             /* their width (dp__rt.otw)                        */
    double *tl, *bl;    /* [n] the levels (see above)                      */
    double *load;       /* [nd] each device's work                         */
    int valid;          /* the levels are those of the current placement  */
} dp__mbound;

/* the bound for the graph and cluster of sim (made by dp_sim_init), whose
   op times it reads */
static int dp__mb_init(dp__mbound *b, const dp_sim *sim, dp_error *err)
{
    int n = sim->g->n_ops, nd = sim->c->n;
    memset(b, 0, sizeof *b);
    b->g = sim->g; b->c = sim->c;
    b->w = ((const dp__rt *)sim->dp__ws)->op_time;
    b->ww = ((const dp__rt *)sim->dp__ws)->otw;
    b->tl = (double *)dp__alloc((size_t)n, sizeof(double), err, "move bound");
    b->bl = (double *)dp__alloc((size_t)n, sizeof(double), err, "move bound");
    b->load = (double *)dp__alloc((size_t)nd, sizeof(double), err, "move bound");
    if (!b->tl || !b->bl || !b->load) return DP_ERR_NOMEM;
    return 0;
}

static void dp__mb_free(dp__mbound *b)
{
    DP_FREE(b->tl); DP_FREE(b->bl); DP_FREE(b->load);
}

/* the levels and loads of placement a */
static void dp__mb_levels(dp__mbound *b, const int *a)
{
    const dp_graph *g = b->g;
    int n = g->n_ops, nd = b->c->n, i, k;
    for (i = 0; i < nd; i++) b->load[i] = 0;
    for (i = 0; i < n; i++) {
        int v = g->topo[i];
        double r = 0;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k], u = g->src[e];
            double x = b->tl[u] + dp_xfer_time(b->c, g->bytes[e], a[u], a[v]);
            if (x > r) r = x;
        }
        b->tl[v] = r + dp__otime(b->w, b->ww, v, a[v]);
        b->load[a[v]] += dp__otime(b->w, b->ww, v, a[v]);
    }
    for (i = n - 1; i >= 0; i--) {
        int v = g->topo[i];
        double r = 0;
        for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
            int e = g->out_edge[k], y = g->dst[e];
            double x = dp_xfer_time(b->c, g->bytes[e], a[v], a[y]) + b->bl[y];
            if (x > r) r = x;
        }
        b->bl[v] = r + dp__otime(b->w, b->ww, v, a[v]);
    }
    b->valid = 1;
}

/* A lower bound on the makespan of placement a, in which v is on d and
   every other op where the levels' placement has it (v was elsewhere) */
static double dp__mb_bound(const dp__mbound *b, const int *a, int v, int d)
{
    const dp_graph *g = b->g;
    int k;
    double in = 0, out = 0, wv = dp__otime(b->w, b->ww, v, d), lb;
    for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
        int e = g->in_edge[k], u = g->src[e];
        double x = b->tl[u] + dp_xfer_time(b->c, g->bytes[e], a[u], d);
        if (x > in) in = x;
    }
    for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
        int e = g->out_edge[k], y = g->dst[e];
        double x = dp_xfer_time(b->c, g->bytes[e], d, a[y]) + b->bl[y];
        if (x > out) out = x;
    }
    lb = in + wv + out;
    if (b->load[d] + wv > lb) lb = b->load[d] + wv;
    return lb * (1 - 1e-9);
}

/* enumopt from assign, in place; stopped at deadline (dp_now seconds, 0:
   none) with *stopped set. *sims counts the simulations, *bounded the
   moves the lower bound refused without one (a move is kept only when
   it ends strictly earlier than the best so far). */
static int dp__enumopt(const dp_graph *g, const dp_cluster *c, const dp_place_opts *o, dp_sim *sim, const dp_sim_opts *so,
                       double deadline, int *assign, long *sims, long *bounded, int *stopped, dp_error *err)
{
    int n = g->n_ops, nd = c->n, rc = 0, pass, i, d, limited = dp__limited(c);
    dp__mbound mb;
    int max_passes = o->max_passes > 0 ? o->max_passes : 100;
    dp__clock clk;
    double *bl = (double *)dp__alloc((size_t)n, sizeof(double), err, "enumopt");
    double *scratch = (double *)dp__alloc((size_t)nd, sizeof(double), err, "enumopt");
    int *ord = (int *)dp__alloc((size_t)n, sizeof(int), err, "enumopt");
    double best;
    dp__opheap q;
    memset(&mb, 0, sizeof mb);
    if (!bl || !scratch || !ord) { rc = DP_ERR_NOMEM; goto done; }
    if (!o->no_move_bound && (rc = dp__mb_init(&mb, sim, err))) goto done;
    /* critical-path order: decreasing b-level, ties lower index */
    dp_blevel(g, c, bl);
    q.h = ord; q.n = 0; q.key = bl;
    for (i = 0; i < n; i++) dp__oh_push(&q, i);
    {
        int *tmp = (int *)dp__alloc((size_t)n, sizeof(int), err, "enumopt");
        if (!tmp) { rc = DP_ERR_NOMEM; goto done; }
        for (i = 0; i < n; i++) tmp[i] = dp__oh_pop(&q);
        memcpy(ord, tmp, sizeof(int) * (size_t)n);
        DP_FREE(tmp);
    }
    dp__clock_init(&clk, g, deadline, o->progress != NULL);
    if ((rc = dp_sim_run(sim, assign, so, err))) goto done;
    (*sims)++;
    best = sim->makespan;
    for (pass = 0; pass < max_passes; pass++) {
        int improved = 0;
        for (i = 0; i < n; i++) {
            int v = ord[i], cur = assign[v], keep = cur;
            if (mb.tl && !mb.valid) dp__mb_levels(&mb, assign);   /* v on cur: valid for all of v's moves */
            for (d = 0; d < nd; d++) {
                if (d == cur) continue;
                assign[v] = d;
                if (limited && !dp__all_fit(g, c, assign, scratch)) continue;
                if (mb.tl && dp__mb_bound(&mb, assign, v, d) >= best - 1e-12 * fabs(best)) {
                    (*bounded)++;   /* it cannot end strictly earlier */
                    continue;
                }
                if ((rc = dp_sim_run(sim, assign, so, err))) goto done;
                (*sims)++;
                if (sim->makespan < best - 1e-12 * fabs(best)) { best = sim->makespan; keep = d; }
                if (dp__clock_tick(&clk, o, *sims, 0, best, stopped)) break;
            }
            assign[v] = keep;
            if (keep != cur) { improved = 1; mb.valid = 0; }
            if (*stopped) break;
        }
        if (!improved || *stopped) break;
    }
done:
    dp__mb_free(&mb);
    DP_FREE(bl); DP_FREE(scratch); DP_FREE(ord);
    return rc;
}

/* anneal from assign, in place, as enumopt; the temperature follows its
   schedule over the whole budget whether or not the deadline stops it.
   A worse move is kept with probability exp(-delta / temperature), its
   uniform draw made only for a worse move: where the lower bound alone
   makes the move worse (by lb - cur > 0), the draw is made first, and a
   draw at or above exp(-(lb - cur) / temperature) refuses it without a
   simulation (the makespan, at least lb, would refuse it too); any other
   draw goes on to the simulation and is used there. The same draws in
   the same order, so the same search. The bound's levels are made again
   after a kept move only while few moves are kept (a hot search keeps
   many: there the simulation alone is cheaper). */
static int dp__anneal(const dp_graph *g, const dp_cluster *c, const dp_place_opts *o, dp_sim *sim, const dp_sim_opts *so,
                      double deadline, int *assign, long *sims, long *bounded, int *stopped, dp_error *err)
{
    int n = g->n_ops, nd = c->n, rc = 0, limited = dp__limited(c);
    long k, budget = o->budget > 0 ? o->budget : 20L * n * nd;
    double *scratch = (double *)dp__alloc((size_t)nd, sizeof(double), err, "anneal");
    int *best = (int *)dp__alloc((size_t)n, sizeof(int), err, "anneal");
    double cur, best_ms, t0, t1, kept = 1;   /* kept: the recent share of moves kept */
    dp__clock clk;
    dp__mbound mb;
    dp_rng rng;
    memset(&mb, 0, sizeof mb);
    if (!scratch || !best) { rc = DP_ERR_NOMEM; goto done; }
    if (!o->no_move_bound && nd >= 2 && (rc = dp__mb_init(&mb, sim, err))) goto done;
    dp__clock_init(&clk, g, deadline, o->progress != NULL);
    dp_rng_seed(&rng, o->seed);
    if ((rc = dp_sim_run(sim, assign, so, err))) goto done;
    (*sims)++;
    cur = best_ms = sim->makespan;
    memcpy(best, assign, sizeof(int) * (size_t)n);
    t0 = 0.05 * cur; t1 = 1e-4 * cur;
    if (nd < 2) goto done;
    for (k = 1; k < budget; k++) {
        int v = dp_rng_int(&rng, n), old = assign[v], d = dp_rng_int(&rng, nd - 1), drawn;
        double temp = t0 * pow(t1 / t0, (double)k / (double)budget), delta, u = 0;
        if (d >= old) d++;
        assign[v] = d;
        if (limited && !dp__all_fit(g, c, assign, scratch)) {
            /* over memory: the next devices round from d, the first where
               v fits (a refused move would spend the budget for nothing) */
            int tries;
            for (tries = 2; tries < nd; tries++) {
                if (++d == nd) d = 0;
                if (d == old && ++d == nd) d = 0;
                assign[v] = d;
                if (dp__all_fit(g, c, assign, scratch)) break;
            }
            if (tries >= nd) { assign[v] = old; continue; }
        }
        drawn = 0;
        if (mb.tl && (mb.valid || kept < 0.25)) {
            double lb;
            if (!mb.valid) { assign[v] = old; dp__mb_levels(&mb, assign); assign[v] = d; }
            if ((lb = dp__mb_bound(&mb, assign, v, d)) > cur) {
                u = dp_rng_uniform(&rng);
                drawn = 1;
                if (!(u < exp(-(lb - cur) / temp))) {
                    assign[v] = old;
                    (*bounded)++;
                    kept *= 0.99;
                    if (dp__clock_tick(&clk, o, *sims + *bounded, budget, best_ms, stopped)) break;
                    continue;
                }
            }
        }
        if ((rc = dp_sim_run(sim, assign, so, err))) goto done;
        (*sims)++;
        delta = sim->makespan - cur;
        if ((!drawn && delta <= 0) || (drawn ? u : dp_rng_uniform(&rng)) < exp(-delta / temp)) {
            cur = sim->makespan;
            if (cur < best_ms) { best_ms = cur; memcpy(best, assign, sizeof(int) * (size_t)n); }
            mb.valid = 0;
            kept = 0.99 * kept + 0.01;
        } else {
            assign[v] = old;
            kept *= 0.99;
        }
        if (dp__clock_tick(&clk, o, *sims + *bounded, budget, best_ms, stopped)) break;
    }
    memcpy(assign, best, sizeof(int) * (size_t)n);
done:
    dp__mb_free(&mb);
    DP_FREE(scratch); DP_FREE(best);
    return rc;
}

/* Every op on its slowest device, one after another: no placement's
   compute takes longer (dp_check's bound, less its transfers). */
static double dp__slowest_work(const dp_graph *g, const dp_cluster *c)
{
    double sum = 0;
    int v, d;
    for (v = 0; v < g->n_ops; v++) {
        double mx = 0;
        for (d = 0; d < c->n; d++) if (dp_op_time(g, c, v, d) > mx) mx = dp_op_time(g, c, v, d);
        sum += mx;
    }
    return sum;
}

/* ---- pipeline and the single-device fallback ------------------------- */
/* The stages for bottleneck T: ops in topological order fill device 0
   while its stage's time stays within T and its memory within its own,
   then device 1, ...; 1 when every op found a stage, else 0 with *stuck
   the op that did not (mem, assign: the state reached). */
static int dp__pipeline_cut(const dp_graph *g, const dp_cluster *c, double T, dp__mem *mem, int *assign, int *stuck)
{
    int i, d = 0, nd = c->n;
    double t = 0;
    memset(mem->used, 0, sizeof(double) * (size_t)nd);
    if (mem->held) memset(mem->held, 0, sizeof(uint64_t) * dp__mem_words(g));
    for (i = 0; i < g->n_ops; i++) assign[i] = -1;
    for (i = 0; i < g->n_ops; i++) {
        int v = g->topo[i];
        double tv = dp_op_time(g, c, v, d);
        while (t + tv > T || !dp__mem_fits(mem, assign, v, d)) {
            if (t == 0 || d + 1 >= nd) { *stuck = v; return 0; }   /* alone on an empty stage, or no stage left */
            d++; t = 0; tv = dp_op_time(g, c, v, d);
        }
        dp__mem_place(mem, assign, v, d);
        assign[v] = d;
        t += tv;
    }
    return 1;
}

static int dp__pipeline(const dp_graph *g, const dp_cluster *c, int *assign, dp_error *err)
{
    int nd = c->n, it, stuck = 0, rc = 0;
    double lo = 0, hi;
    double *used = (double *)dp__alloc((size_t)nd, sizeof(double), err, "pipeline");
    uint64_t *held = (uint64_t *)dp__alloc(dp__mem_words(g) + 1, sizeof(uint64_t), err, "pipeline");
    dp__mem mem;
    if (!used || !held) { rc = DP_ERR_NOMEM; goto done; }
    mem.g = g; mem.c = c; mem.used = used; mem.held = held;
    /* hi: every op on one stage of the slowest device's time always holds
       the time; the memory then decides */
    hi = dp__slowest_work(g, c) * (1 + 1e-9) + 1e-300;
    if (!dp__pipeline_cut(g, c, hi, &mem, assign, &stuck)) { rc = dp__infeasible(&mem, assign, stuck, err); goto done; }
    for (it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (dp__pipeline_cut(g, c, mid, &mem, assign, &stuck)) hi = mid; else lo = mid;
    }
    (void)dp__pipeline_cut(g, c, hi, &mem, assign, &stuck);
done:
    DP_FREE(used); DP_FREE(held);
    return rc;
}

/* Never worse than one device: the best single device that fits, scored
   by so, replaces assign (and *best) when its makespan is lower, or when
   *best is HUGE_VAL (no answer within memory); *fell is then 1. dp_place
   and the learned placers (scored as their answer is) call it; those
   hand over their op times (optime, as dp__best_single's) and an array
   of n ints they are done with (work; NULL: one is allocated), so that
   the fallback touches no page the placer did not. */
static int dp__single_fallback(dp_sim *s, const dp_graph *g, const dp_cluster *c, const dp_sim_opts *so, const double *optime,
                               int *work, int *assign, double *best, int *fell, long *sims, dp_error *err)
{
    int *one = work, rc = 0;
    double *sc = NULL;
    *fell = 0;
    if (c->n < 2) return 0;
    if (!work) one = (int *)dp__alloc((size_t)g->n_ops, sizeof(int), err, "fallback");
    sc = (double *)dp__alloc((size_t)c->n, sizeof(double), err, "fallback");
    if (!one || !sc) { rc = DP_ERR_NOMEM; goto done; }
    if (dp__best_single(g, c, optime, one, sc) < 0) goto done;
    if ((rc = dp_sim_run(s, one, so, err))) goto done;
    ++*sims;
    if (s->makespan < *best) {
        memcpy(assign, one, sizeof(int) * (size_t)g->n_ops);
        *best = s->makespan;
        *fell = 1;
    }
done:
    if (!work) DP_FREE(one);
    DP_FREE(sc);
    return rc;
}

DPDEF int dp_place(dp_method m, const dp_graph *g, const dp_cluster *c, const dp_place_opts *opts,
                   int *assign, dp_place_result *res, dp_error *err)
{
    dp_place_opts o;
    dp_sim sim;
    dp_sim_opts so;
    dp_place_result r;
    double t_begin = dp_now(), *scratch = NULL, deadline = 0;   /* 0: none */
    int rc, *out, bad_start = 0, stopped = 0, why = DP_TIME_LIMITED;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    memset(&r, 0, sizeof r);
    if (res) *res = r;   /* zero until it succeeds */
    memset(&so, 0, sizeof so);
    so.order = o.order;
    so.no_xfers = 1;   /* the searches and the scoring run want makespans, not transfer records */
    dp__ok(err);
    if (!(o.time_limit >= 0 && o.time_limit < 1e9)) return dp__fail(err, DP_ERR_RANGE, "place: time limit %g s not in [0, 1e9)", o.time_limit);
    if (!(o.time_bound < 1e9)) return dp__fail(err, DP_ERR_RANGE, "place: time bound %g s not below 1e9", o.time_bound);
    if (o.time_limit > 0) deadline = t_begin + o.time_limit;
    else if (((m == DP_METHOD_ANNEAL && o.budget <= 0) || (m == DP_METHOD_ENUMOPT && o.max_passes <= 0)) && o.time_bound >= 0) {
        /* anneal's default budget: its count, or the time bound; enumopt's
           default passes: until one changes nothing, or the time bound */
        deadline = t_begin + (o.time_bound > 0 ? o.time_bound : DP_ANNEAL_TIME_BOUND);
        why = DP_TIME_BOUNDED;
    }
    if ((rc = dp_check(g, c, err))) return rc;
    if ((rc = dp_sim_init(&sim, g, c, err))) return rc;
    out = assign;   /* written only on success */
    assign = (int *)dp__alloc((size_t)g->n_ops, sizeof(int), err, "placement");
    if (!assign) { dp_sim_free(&sim); return DP_ERR_NOMEM; }
    switch (m) {
    case DP_METHOD_SINGLE: case DP_METHOD_ROUND_ROBIN: case DP_METHOD_RANDOM:
        rc = dp__place_simple(m, g, c, o.seed, assign, err);
        break;
    case DP_METHOD_CP:
        rc = dp__list_schedule(g, c, 0, assign, NULL, NULL, NULL, &r.schedule_length, err);
        break;
    case DP_METHOD_HEFT:
        rc = dp__list_schedule(g, c, 1, assign, NULL, NULL, NULL, &r.schedule_length, err);
        break;
    case DP_METHOD_ENUMOPT: case DP_METHOD_ANNEAL:
        if (o.start) {
            int v;
            for (v = 0; v < g->n_ops; v++)
                if (o.start[v] < 0 || o.start[v] >= c->n) { rc = dp__fail(err, DP_ERR_RANGE, "start placement: op %d on device %d, cluster has 0..%d", v, o.start[v], c->n - 1); break; }
            if (!rc && dp__limited(c)) {
                scratch = (double *)dp__alloc((size_t)c->n, sizeof(double), err, "placer");
                if (!scratch) rc = DP_ERR_NOMEM;
                else if (!dp__all_fit(g, c, o.start, scratch)) {
                    int d = dp__over_memory(c, scratch);
                    rc = dp__fail(err, DP_ERR_INFEASIBLE, "start placement exceeds device %d's memory: it needs %.6g bytes of %.6g", d, scratch[d], c->memory[d]);
                    bad_start = 1;   /* the caller's own placement: no fallback hides it */
                }
            }
            if (!rc) memcpy(assign, o.start, sizeof(int) * (size_t)g->n_ops);
        } else {
            /* cp's placement, or where memory leaves cp none, the first of
               heft's and pipeline's that fits (pipeline packs tightest) */
            rc = dp__list_schedule(g, c, 0, assign, NULL, NULL, NULL, NULL, err);
            if (rc == DP_ERR_INFEASIBLE) rc = dp__list_schedule(g, c, 1, assign, NULL, NULL, NULL, NULL, err);
            if (rc == DP_ERR_INFEASIBLE) rc = dp__pipeline(g, c, assign, err);
        }
        if (!rc) rc = m == DP_METHOD_ENUMOPT ? dp__enumopt(g, c, &o, &sim, &so, deadline, assign, &r.simulations, &r.bounded, &stopped, err)
                                             : dp__anneal(g, c, &o, &sim, &so, deadline, assign, &r.simulations, &r.bounded, &stopped, err);
        if (stopped) r.time_limited = why;
        break;
    case DP_METHOD_PIPELINE:
        rc = dp__pipeline(g, c, assign, err);
        break;
    default:
        rc = dp__fail(err, DP_ERR_ARG, "unknown placement method %d", (int)m);
    }
    if (!rc) rc = dp_sim_run(&sim, assign, &so, err);
    if (!rc) {
        r.simulations++;   /* the scoring run */
        r.makespan = sim.makespan;
        if (m != DP_METHOD_CP && m != DP_METHOD_HEFT) r.schedule_length = r.makespan;
    }
    /* never worse than one device (and one device where the method found
       nothing within memory) */
    if ((!rc || (rc == DP_ERR_INFEASIBLE && !bad_start)) && m != DP_METHOD_SINGLE && !o.no_fallback) {
        double best = rc ? HUGE_VAL : r.makespan;
        int frc = dp__single_fallback(&sim, g, c, &so, NULL, NULL, assign, &best, &r.fallback, &r.simulations, err);
        if (frc) rc = frc;
        else if (r.fallback) {
            r.makespan = r.schedule_length = best;
            rc = 0;
            dp__ok(err);
        }
    }
    if (!rc) rc = dp__lower_bound(g, c, &r.lower_bound, err);
    if (!rc) {
        r.seconds = dp_now() - t_begin;
        if (res) *res = r;
        memcpy(out, assign, sizeof(int) * (size_t)g->n_ops);
    }
    DP_FREE(assign);
    DP_FREE(scratch);
    dp_sim_free(&sim);
    return rc;
}

/* ======================================================================
   >>gantt
   ====================================================================== */
/* str as XML character data or attribute value (the Gantt chart's and the
   training curve's labels): < > & " ' escaped, and what XML 1.0 cannot
   hold even escaped written as U+FFFD: a byte that is not part of valid
   UTF-8, a C0 control other than tab, LF and CR, U+FFFE and U+FFFF. */
static void dp__xml(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        int n = dp__utf8_len(s);
        switch (*s) {
        case '<': fputs("&lt;", f); s++; continue;
        case '>': fputs("&gt;", f); s++; continue;
        case '&': fputs("&amp;", f); s++; continue;
        case '"': fputs("&quot;", f); s++; continue;
        case '\'': fputs("&apos;", f); s++; continue;
        default: break;
        }
        if (n == 0 || (*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r') ||
            (n == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE)) {
            fputs("\xEF\xBF\xBD", f);   /* U+FFFD, the replacement character */
            s += n ? n : 1;
            continue;
        }
        fwrite(s, 1, (size_t)n, f);
        s += n;
    }
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about n ticks. */
static double dp__tick(double span, int n)
{
    double raw = span / n, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* bytes as "512 B", "1.5 kB", "3.2 GB" (powers of 1000) */
static void dp__bytes_text(char *buf, size_t n, double b)
{
    static const char *unit[] = { "B", "kB", "MB", "GB", "TB", "PB" };
    int u = 0;
    while (b >= 999.5 && u < 5) { b /= 1000; u++; }
    snprintf(buf, n, u ? "%.3g %s" : "%.0f %s", b, unit[u]);
}

DPDEF int dp_gantt_svg_file(FILE *f, const dp_sim *s, const int *assign, const dp_gantt_opts *opts, dp_error *err)
{
    static const char *pal[] = { "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948",
                                 "#76b7b2", "#ff9da7", "#9c755f", "#e15759", "#bab0ac" };
    const dp_graph *g = s->g;
    const dp_cluster *c = s->c;
    int W = opts && opts->width > 0 ? opts->width : 1200, nd, d, v, i;
    const char *title = opts && opts->title ? opts->title : "schedule";
    double left = 120, right = 20, top = 56, lane = 34, gap = 18, ms, sx, lb, tick, t;
    double H;
    if (!g || !c || !s->dp__ws || s->runs == 0) return dp__fail(err, DP_ERR_ARG, "gantt: the simulator has not run (call dp_sim_run first)");
    nd = c->n;
    ms = s->makespan > 0 ? s->makespan : 1;
    sx = (W - left - right) / ms;
    if (opts && opts->lower_bound > 0) lb = opts->lower_bound;
    else if (dp__lower_bound(g, c, &lb, err)) return DP_ERR_NOMEM;
    H = top + nd * (lane + gap) + 40;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n", W, H, W, H);
    fprintf(f, "<defs><marker id=\"arr\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n");
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", 10);
    dp__xml(f, title);
    fprintf(f, "</text>\n<text x=\"10\" y=\"40\" font-size=\"12\">makespan %.6g, lower bound %.6g, ratio %.3f; %d ops on %d devices, %d transfers%s</text>\n",
            s->makespan, lb, lb > 0 ? s->makespan / lb : 0.0, g->n_ops, nd, s->n_xfers,
            (opts && opts->hide_transfers) || s->n_xfers > (opts && opts->max_transfers > 0 ? opts->max_transfers : 600) ? " (not drawn)" : " (arrows)");
    /* time grid */
    tick = dp__tick(ms, 10);
    for (t = 0; t <= ms * (1 + 1e-9); t += tick) {
        double x = left + t * sx;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e4e4e4\"/>", x, top - 4, x, top + nd * (lane + gap));
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#666\">%.4g</text>\n", x, top + nd * (lane + gap) + 14, t);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" fill=\"#666\">time</text>\n", W - right, top + nd * (lane + gap) + 30);
    /* lanes */
    for (d = 0; d < nd; d++) {
        double y = top + d * (lane + gap);
        fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"#f6f6f6\"/>", left, y, ms * sx, lane);
        fprintf(f, "<text x=\"8\" y=\"%.1f\" font-weight=\"bold\">", y + 14);
        dp__xml(f, c->name[d]);
        fprintf(f, "</text><text x=\"8\" y=\"%.1f\" fill=\"#666\">busy %.0f%%</text>\n", y + 28, 100.0 * s->busy[d] / ms);
        if (s->memory_tracked) {   /* the device's peak bytes (of its memory) */
            char pk[32], lim[32];
            dp__bytes_text(pk, sizeof pk, s->peak_bytes[d]);
            dp__bytes_text(lim, sizeof lim, c->memory[d]);
            fprintf(f, "<text x=\"8\" y=\"%.1f\" fill=\"%s\">peak %s%s%s</text>\n", y + 41,
                    c->memory[d] > 0 && s->peak_bytes[d] > c->memory[d] ? "#d62728" : "#666", pk, c->memory[d] > 0 ? " / " : "", c->memory[d] > 0 ? lim : "");
        }
    }
    /* ops */
    for (v = 0; v < g->n_ops; v++) {
        double y = top + assign[v] * (lane + gap), x = left + s->start[v] * sx, w = (s->end[v] - s->start[v]) * sx;
        const char *col = g->kind[v] != DP_OP_OPAQUE ? pal[g->kind[v] % 10] : pal[(v * 7) % 10];
        double wd = w > 2 ? w : 2;   /* the shortest op stays visible */
        fprintf(f, "<g><title>");
        dp__xml(f, g->name[v]);
        fprintf(f, " (%s) on ", dp_kind_name(g->kind[v]));
        dp__xml(f, c->name[assign[v]]);
        fprintf(f, ": start %.6g, end %.6g, took %.6g</title>", s->start[v], s->end[v], s->end[v] - s->start[v]);
        if (w > 4) fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" stroke=\"white\" stroke-width=\"0.5\"/>", x, y, w, lane, col);
        else fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"/>", x, y, wd, lane, col);
        if (w > 7.0 * (double)strlen(g->name[v]) + 4) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"white\">", x + w / 2, y + lane / 2 + 4);
            dp__xml(f, g->name[v]);
            fprintf(f, "</text>");
        }
        fprintf(f, "</g>\n");
    }
    /* transfers: from the source lane's bottom edge to the target lane's top;
       past max_transfers arrows the chart would be a hairball: leave them out */
    if (!(opts && opts->hide_transfers) && s->n_xfers <= (opts && opts->max_transfers > 0 ? opts->max_transfers : 600))
        for (i = 0; i < s->n_xfers; i++) {
            const dp_xfer *x = &s->xfers[i];
            double y1 = top + x->from * (lane + gap) + (x->to > x->from ? lane : 0);
            double y2 = top + x->to * (lane + gap) + (x->to > x->from ? 0 : lane);
            fprintf(f, "<g><title>transfer ");
            dp__xml(f, g->name[g->src[x->edge]]);
            fprintf(f, " -&gt; ");
            dp__xml(f, g->name[g->dst[x->edge]]);
            fprintf(f, ": %.6g bytes, ", g->bytes[x->edge]);
            dp__xml(f, c->name[x->from]);
            fputs(" to ", f);
            dp__xml(f, c->name[x->to]);
            fprintf(f, ", %.6g to %.6g</title>", x->start, x->end);
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#555\" stroke-opacity=\"0.55\" stroke-width=\"1\" marker-end=\"url(#arr)\"/></g>\n",
                    left + x->start * sx, y1, left + x->end * sx, y2);
        }
    if (lb > 0 && lb <= ms) {
        double x = left + lb * sx;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#d62728\" stroke-dasharray=\"4,3\"><title>lower bound %.6g</title></line>\n",
                x, top - 8, x, top + nd * (lane + gap) - gap, lb);
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" fill=\"#d62728\" text-anchor=\"%s\">lower bound</text>\n", x + (lb > 0.8 * ms ? -3 : 3), top - 10, lb > 0.8 * ms ? "end" : "start");
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? dp__fail(err, DP_ERR_IO, "gantt: write error") : 0;
}

DPDEF int dp_gantt_svg(const char *path, const dp_sim *s, const int *assign, const dp_gantt_opts *opts, dp_error *err)
{
    dp__out o;
    int rc;
    if ((rc = dp__out_open(&o, path, err))) return rc;
    rc = dp_gantt_svg_file(o.f, s, assign, opts, err);
    return dp__out_close(&o, rc, err);
}

/* ======================================================================
   >>gen
   ====================================================================== */
DPDEF int dp_gen(dp_graph *g, const dp_gen_opts *opts, dp_error *err)
{
    dp_gen_opts o;
    dp_rng rng;
    int *level_start = NULL, nlev = 0, placed = 0, rc = 0, l, i, j;
    double mean_bytes;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    dp_graph_init(g);
    if (o.nodes == 0) o.nodes = 100;
    if (o.nodes < 1 || o.nodes > DP_MAX_OPS) return dp__fail(err, o.nodes < 1 ? DP_ERR_RANGE : DP_ERR_LIMIT, "gen: nodes %d not in 1..%d (DP_MAX_OPS)", o.nodes, DP_MAX_OPS);
    if (o.width == 0) o.width = (int)ceil(sqrt((double)o.nodes));
    if (o.width < 1) return dp__fail(err, DP_ERR_RANGE, "gen: width %d must be >= 1", o.width);
    if (o.density == 0) o.density = 0.3;
    if (!(o.density > 0 && o.density <= 1)) return dp__fail(err, DP_ERR_RANGE, "gen: density %g not in (0, 1]", o.density);
    if (o.regularity == 0) o.regularity = 0.5;
    if (!(o.regularity > 0 && o.regularity <= 1)) return dp__fail(err, DP_ERR_RANGE, "gen: regularity %g not in (0, 1]", o.regularity);
    if (o.jump == 0) o.jump = o.shape == DP_GEN_LAYERED ? 1 : 3;
    if (o.jump < 1) return dp__fail(err, DP_ERR_RANGE, "gen: jump %d must be >= 1", o.jump);
    if (o.shape == DP_GEN_LAYERED && o.jump != 1) return dp__fail(err, DP_ERR_RANGE, "gen: a layered graph has jump 1, not %d", o.jump);
    if (!(o.ccr >= 0) || o.ccr > 1e6) return dp__fail(err, DP_ERR_RANGE, "gen: ccr %g not in [0, 1e6]", o.ccr);
    dp_rng_seed(&rng, o.seed);
    /* level sizes: width * (1 +- (1 - regularity)), until nodes are used */
    while (placed < o.nodes) {
        int sz = (int)floor(o.width * (1 + (1 - o.regularity) * (2 * dp_rng_uniform(&rng) - 1)) + 0.5);
        if (sz < 1) sz = 1;
        if (sz > o.nodes - placed) sz = o.nodes - placed;
        if (DP__PUSH(level_start, placed)) goto nomem;
        placed += sz;
        nlev++;
    }
    if (DP__PUSH(level_start, placed)) goto nomem;
    /* ops: compute uniform integer 1..10; output bytes so that mean
       transfer time / mean compute time = ccr on a unit cluster */
    mean_bytes = o.ccr * 5.5;
    for (l = 0; l < nlev; l++)
        for (i = level_start[l]; i < level_start[l + 1]; i++) {
            dp_op_desc d;
            char nm[32];
            memset(&d, 0, sizeof d);
            snprintf(nm, sizeof nm, "L%d_%d", l, i - level_start[l]);
            d.name = nm;
            d.compute = (double)(1 + dp_rng_int(&rng, 10));
            d.out_bytes = mean_bytes > 0 ? floor(mean_bytes * (0.5 + dp_rng_uniform(&rng)) * 1000 + 0.5) / 1000 : 0;
            if ((rc = dp_graph_add_op(g, &d, NULL, err))) goto done;
        }
    /* edges: each op of level l > 0 links from ops of the `jump` levels above
       with probability density, and always from one op of level l-1 */
    for (l = 1; l < nlev; l++)
        for (i = level_start[l]; i < level_start[l + 1]; i++) {
            int lo = level_start[l - o.jump >= 0 ? l - o.jump : 0], hi = level_start[l], forced;
            forced = level_start[l - 1] + dp_rng_int(&rng, level_start[l] - level_start[l - 1]);
            for (j = lo; j < hi; j++)
                if (j == forced || dp_rng_uniform(&rng) < o.density)
                    if ((rc = dp_graph_add_edge(g, j, i, g->out_bytes[j], err))) goto done;
        }
    rc = dp_graph_finalize(g, err);
    goto done;
nomem:
    rc = dp__fail(err, DP_ERR_NOMEM, "gen: out of memory for the levels");
done:
    DP__ARRFREE(level_start);
    if (rc) dp_graph_free(g);
    return rc;
}

/* ======================================================================
   >>features
   The dense kernels both learned placers run on, then the per-graph
   context for learning: features, critical paths and every buffer an
   episode needs, made once per graph (dp__gctx_init) in one block.
   ====================================================================== */
#define DP__F  DP_N_FEAT
#define DP__DF DP_N_DEVFEAT
#define DP__CF 7               /* the critic's state features            */

#ifdef __cplusplus
#define DP__RESTRICT __restrict
#else
#define DP__RESTRICT restrict
#endif

static double dp__relu(double x) { return x > 0 ? x : 0; }

/* Dense kernels over flat row-major buffers. A layer W[out][in] applied to
   a batch of rows is Y += X W^T: dp__gemm(Y, X, Wt) with Wt = W^T made once
   per episode (dp__transpose); its input gradient is GX += G W, which is
   dp__gemm(GX, G, W); its weight gradient is GW += G^T X, dp__gemm_tn.
   Every output element is its initial value plus the products added one
   at a time in the order of the inner index, whatever the tiling, so a
   row's result does not depend on the rows batched with it. Under GCC and
   clang the tiles use the vector extension (4 doubles with AVX, else 2):
   two rows by 4 vectors, or one row by 8, keep eight accumulators in
   flight; define DP_NO_SIMD for plain loops. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(DP_NO_SIMD)
#define DP__SIMD 1
#if defined(__AVX__)
#define DP__VW 4   /* doubles per vector */
typedef double dp__v __attribute__((vector_size(32), aligned(8), __may_alias__));
#define DP__SPLAT(s) ((dp__v){ (s), (s), (s), (s) })
#else
#define DP__VW 2
typedef double dp__v __attribute__((vector_size(16), aligned(8), __may_alias__));
#define DP__SPLAT(s) ((dp__v){ (s), (s) })
#endif
#if defined(__AVX__)
#include <immintrin.h>
#define DP__VSQRT(x) ((dp__v)_mm256_sqrt_pd((__m256d)(x)))
#elif defined(__SSE2__)
#include <emmintrin.h>
#define DP__VSQRT(x) ((dp__v)_mm_sqrt_pd((__m128d)(x)))
#endif
#define DP__LD(p) (*(const dp__v *)(const void *)(p))
#define DP__ST(p, v) (*(dp__v *)(void *)(p) = (v))
#else
#define DP__SIMD 0
#endif

/* y = a + b and y = a / s, element by element (each element rounded
   once, as the plain loops would: the vectors change no result). y may
   be a. */
static void dp__vadd(double *y, const double *a, const double *b, int n)
{
    int i = 0;
#if DP__SIMD
    for (; i + DP__VW <= n; i += DP__VW) DP__ST(y + i, DP__LD(a + i) + DP__LD(b + i));
#endif
    for (; i < n; i++) y[i] = a[i] + b[i];
}

static void dp__vdiv(double *y, const double *a, double s, int n)
{
    int i = 0;
#if DP__SIMD
    for (; i + DP__VW <= n; i += DP__VW) DP__ST(y + i, DP__LD(a + i) / DP__SPLAT(s));
#endif
    for (; i < n; i++) y[i] = a[i] / s;
}

/* T[in][out] = W[out][in]^T */
static void dp__transpose(double *DP__RESTRICT T, const double *DP__RESTRICT W, int out, int in)
{
    int i, j;
    for (i = 0; i < out; i++)
        for (j = 0; j < in; j++) T[(size_t)j * out + i] = W[(size_t)i * in + j];
}

/* Y[r][0..N) += sum_k X[r][k] M[k][0..N), r < rows; row strides ldy, ldx. */
static void dp__gemm(double *DP__RESTRICT Y, size_t ldy, const double *DP__RESTRICT X, size_t ldx,
                     const double *DP__RESTRICT M, int rows, int K, int N)
{
    int r = 0, c, k;
    for (; r + 2 <= rows; r += 2) {
        const double *x0 = X + (size_t)r * ldx, *x1 = x0 + ldx;
        double *y0 = Y + (size_t)r * ldy, *y1 = y0 + ldy;
        c = 0;
#if DP__SIMD
        for (; c + 4 * DP__VW <= N; c += 4 * DP__VW) {
            dp__v a0 = DP__LD(y0 + c), a1 = DP__LD(y0 + c + DP__VW), a2 = DP__LD(y0 + c + 2 * DP__VW), a3 = DP__LD(y0 + c + 3 * DP__VW);
            dp__v b0 = DP__LD(y1 + c), b1 = DP__LD(y1 + c + DP__VW), b2 = DP__LD(y1 + c + 2 * DP__VW), b3 = DP__LD(y1 + c + 3 * DP__VW);
            for (k = 0; k < K; k++) {
                const double *m = M + (size_t)k * N + c;
                dp__v u = DP__SPLAT(x0[k]), w = DP__SPLAT(x1[k]);
                dp__v m0 = DP__LD(m), m1 = DP__LD(m + DP__VW), m2 = DP__LD(m + 2 * DP__VW), m3 = DP__LD(m + 3 * DP__VW);
                a0 += u * m0; a1 += u * m1; a2 += u * m2; a3 += u * m3;
                b0 += w * m0; b1 += w * m1; b2 += w * m2; b3 += w * m3;
            }
            DP__ST(y0 + c, a0); DP__ST(y0 + c + DP__VW, a1); DP__ST(y0 + c + 2 * DP__VW, a2); DP__ST(y0 + c + 3 * DP__VW, a3);
            DP__ST(y1 + c, b0); DP__ST(y1 + c + DP__VW, b1); DP__ST(y1 + c + 2 * DP__VW, b2); DP__ST(y1 + c + 3 * DP__VW, b3);
        }
        for (; c + DP__VW <= N; c += DP__VW) {
            dp__v a0 = DP__LD(y0 + c), b0 = DP__LD(y1 + c);
            for (k = 0; k < K; k++) {
                dp__v m0 = DP__LD(M + (size_t)k * N + c);
                a0 += DP__SPLAT(x0[k]) * m0; b0 += DP__SPLAT(x1[k]) * m0;
            }
            DP__ST(y0 + c, a0); DP__ST(y1 + c, b0);
        }
#endif
        for (; c < N; c++) {
            double a = y0[c], b = y1[c];
            for (k = 0; k < K; k++) { a += x0[k] * M[(size_t)k * N + c]; b += x1[k] * M[(size_t)k * N + c]; }
            y0[c] = a; y1[c] = b;
        }
    }
    for (; r < rows; r++) {
        const double *x0 = X + (size_t)r * ldx;
        double *y0 = Y + (size_t)r * ldy;
        c = 0;
#if DP__SIMD
        for (; c + 8 * DP__VW <= N; c += 8 * DP__VW) {
            dp__v a0 = DP__LD(y0 + c), a1 = DP__LD(y0 + c + DP__VW), a2 = DP__LD(y0 + c + 2 * DP__VW), a3 = DP__LD(y0 + c + 3 * DP__VW);
            dp__v a4 = DP__LD(y0 + c + 4 * DP__VW), a5 = DP__LD(y0 + c + 5 * DP__VW), a6 = DP__LD(y0 + c + 6 * DP__VW), a7 = DP__LD(y0 + c + 7 * DP__VW);
            for (k = 0; k < K; k++) {
                const double *m = M + (size_t)k * N + c;
                dp__v u = DP__SPLAT(x0[k]);
                a0 += u * DP__LD(m); a1 += u * DP__LD(m + DP__VW); a2 += u * DP__LD(m + 2 * DP__VW); a3 += u * DP__LD(m + 3 * DP__VW);
                a4 += u * DP__LD(m + 4 * DP__VW); a5 += u * DP__LD(m + 5 * DP__VW); a6 += u * DP__LD(m + 6 * DP__VW); a7 += u * DP__LD(m + 7 * DP__VW);
            }
            DP__ST(y0 + c, a0); DP__ST(y0 + c + DP__VW, a1); DP__ST(y0 + c + 2 * DP__VW, a2); DP__ST(y0 + c + 3 * DP__VW, a3);
            DP__ST(y0 + c + 4 * DP__VW, a4); DP__ST(y0 + c + 5 * DP__VW, a5); DP__ST(y0 + c + 6 * DP__VW, a6); DP__ST(y0 + c + 7 * DP__VW, a7);
        }
        for (; c + DP__VW <= N; c += DP__VW) {
            dp__v a0 = DP__LD(y0 + c);
            for (k = 0; k < K; k++) a0 += DP__SPLAT(x0[k]) * DP__LD(M + (size_t)k * N + c);
            DP__ST(y0 + c, a0);
        }
#endif
        for (; c < N; c++) {
            double a = y0[c];
            for (k = 0; k < K; k++) a += x0[k] * M[(size_t)k * N + c];
            y0[c] = a;
        }
    }
}

/* GW[o][j] += sum_r G[r][o] X[r][j] (o < O, j < J, r < rows); GW is dense
   [O][J], G and X have row strides ldg and ldx. */
static void dp__gemm_tn(double *DP__RESTRICT GW, const double *DP__RESTRICT G, size_t ldg,
                        const double *DP__RESTRICT X, size_t ldx, int rows, int O, int J)
{
    int o = 0, c, r;
#if DP__SIMD
    if (J < 4 * DP__VW) {   /* narrow inputs: vectors run along o */
        int j;
        for (j = 0; j < J; j++) {
            for (o = 0; o + 4 * DP__VW <= O; o += 4 * DP__VW) {
                dp__v a0, a1, a2, a3;
                double t[4 * DP__VW];
                int q;
                for (q = 0; q < 4 * DP__VW; q++) t[q] = GW[(size_t)(o + q) * J + j];
                a0 = DP__LD(t); a1 = DP__LD(t + DP__VW); a2 = DP__LD(t + 2 * DP__VW); a3 = DP__LD(t + 3 * DP__VW);
                for (r = 0; r < rows; r++) {
                    const double *g = G + (size_t)r * ldg + o;
                    dp__v u = DP__SPLAT(X[(size_t)r * ldx + j]);
                    a0 += DP__LD(g) * u; a1 += DP__LD(g + DP__VW) * u; a2 += DP__LD(g + 2 * DP__VW) * u; a3 += DP__LD(g + 3 * DP__VW) * u;
                }
                DP__ST(t, a0); DP__ST(t + DP__VW, a1); DP__ST(t + 2 * DP__VW, a2); DP__ST(t + 3 * DP__VW, a3);
                for (q = 0; q < 4 * DP__VW; q++) GW[(size_t)(o + q) * J + j] = t[q];
            }
            for (; o < O; o++) {
                double a = GW[(size_t)o * J + j];
                for (r = 0; r < rows; r++) a += G[(size_t)r * ldg + o] * X[(size_t)r * ldx + j];
                GW[(size_t)o * J + j] = a;
            }
        }
        return;
    }
#endif
    for (; o + 2 <= O; o += 2) {
        double *w0 = GW + (size_t)o * J, *w1 = w0 + J;
        c = 0;
#if DP__SIMD
        for (; c + 4 * DP__VW <= J; c += 4 * DP__VW) {
            dp__v a0 = DP__LD(w0 + c), a1 = DP__LD(w0 + c + DP__VW), a2 = DP__LD(w0 + c + 2 * DP__VW), a3 = DP__LD(w0 + c + 3 * DP__VW);
            dp__v b0 = DP__LD(w1 + c), b1 = DP__LD(w1 + c + DP__VW), b2 = DP__LD(w1 + c + 2 * DP__VW), b3 = DP__LD(w1 + c + 3 * DP__VW);
            for (r = 0; r < rows; r++) {
                const double *x = X + (size_t)r * ldx + c;
                dp__v u = DP__SPLAT(G[(size_t)r * ldg + o]), w = DP__SPLAT(G[(size_t)r * ldg + o + 1]);
                dp__v x0 = DP__LD(x), x1 = DP__LD(x + DP__VW), x2 = DP__LD(x + 2 * DP__VW), x3 = DP__LD(x + 3 * DP__VW);
                a0 += u * x0; a1 += u * x1; a2 += u * x2; a3 += u * x3;
                b0 += w * x0; b1 += w * x1; b2 += w * x2; b3 += w * x3;
            }
            DP__ST(w0 + c, a0); DP__ST(w0 + c + DP__VW, a1); DP__ST(w0 + c + 2 * DP__VW, a2); DP__ST(w0 + c + 3 * DP__VW, a3);
            DP__ST(w1 + c, b0); DP__ST(w1 + c + DP__VW, b1); DP__ST(w1 + c + 2 * DP__VW, b2); DP__ST(w1 + c + 3 * DP__VW, b3);
        }
        for (; c + DP__VW <= J; c += DP__VW) {
            dp__v a0 = DP__LD(w0 + c), b0 = DP__LD(w1 + c);
            for (r = 0; r < rows; r++) {
                dp__v x0 = DP__LD(X + (size_t)r * ldx + c);
                a0 += DP__SPLAT(G[(size_t)r * ldg + o]) * x0; b0 += DP__SPLAT(G[(size_t)r * ldg + o + 1]) * x0;
            }
            DP__ST(w0 + c, a0); DP__ST(w1 + c, b0);
        }
#endif
        for (; c < J; c++) {
            double a = w0[c], b = w1[c];
            for (r = 0; r < rows; r++) {
                a += G[(size_t)r * ldg + o] * X[(size_t)r * ldx + c];
                b += G[(size_t)r * ldg + o + 1] * X[(size_t)r * ldx + c];
            }
            w0[c] = a; w1[c] = b;
        }
    }
    for (; o < O; o++) {
        double *w0 = GW + (size_t)o * J;
        c = 0;
#if DP__SIMD
        for (; c + 4 * DP__VW <= J; c += 4 * DP__VW) {
            dp__v a0 = DP__LD(w0 + c), a1 = DP__LD(w0 + c + DP__VW), a2 = DP__LD(w0 + c + 2 * DP__VW), a3 = DP__LD(w0 + c + 3 * DP__VW);
            for (r = 0; r < rows; r++) {
                const double *x = X + (size_t)r * ldx + c;
                dp__v u = DP__SPLAT(G[(size_t)r * ldg + o]);
                a0 += u * DP__LD(x); a1 += u * DP__LD(x + DP__VW); a2 += u * DP__LD(x + 2 * DP__VW); a3 += u * DP__LD(x + 3 * DP__VW);
            }
            DP__ST(w0 + c, a0); DP__ST(w0 + c + DP__VW, a1); DP__ST(w0 + c + 2 * DP__VW, a2); DP__ST(w0 + c + 3 * DP__VW, a3);
        }
        for (; c + DP__VW <= J; c += DP__VW) {
            dp__v a0 = DP__LD(w0 + c);
            for (r = 0; r < rows; r++) a0 += DP__SPLAT(G[(size_t)r * ldg + o]) * DP__LD(X + (size_t)r * ldx + c);
            DP__ST(w0 + c, a0);
        }
#endif
        for (; c < J; c++) {
            double a = w0[c];
            for (r = 0; r < rows; r++) a += G[(size_t)r * ldg + o] * X[(size_t)r * ldx + c];
            w0[c] = a;
        }
    }
}

/* out[0..H) += sum of the rows of X (row stride ldx) */
static void dp__colsum(double *DP__RESTRICT out, const double *DP__RESTRICT X, size_t ldx, int rows, int H)
{
    int r, i;
    for (r = 0; r < rows; r++)
        for (i = 0; i < H; i++) out[i] += X[(size_t)r * ldx + i];
}

/* T = G where pre > 0, else 0 (the ReLU's backward), over n values */
static void dp__relu_mask(double *DP__RESTRICT T, const double *DP__RESTRICT G, const double *DP__RESTRICT pre, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) T[i] = pre[i] > 0 ? G[i] : 0;
}

/* The kinds of message-passing round (see >>gnn) and their layout. */
typedef enum dp__mp_mode { DP__MP_BOTH = 0, DP__MP_FWD, DP__MP_BWD } dp__mp_mode;

typedef struct dp__mp_w { double *ws, *wf, *wb, *af, *ab, *b; } dp__mp_w;

static size_t dp__mp_size(int H, dp__mp_mode mode)
{
    return mode == DP__MP_BOTH ? 3 * (size_t)H * H + 3 * (size_t)H : 2 * (size_t)H * H + 2 * (size_t)H;
}

static void dp__mp_map(dp__mp_w *w, double *W, int H, dp__mp_mode mode)
{
    size_t HH = (size_t)H * H;
    w->ws = W; W += HH;
    w->wf = mode != DP__MP_BWD ? W : NULL; if (w->wf) W += HH;
    w->wb = mode != DP__MP_FWD ? W : NULL; if (w->wb) W += HH;
    w->af = w->wf ? W : NULL; if (w->af) W += H;
    w->ab = w->wb ? W : NULL; if (w->ab) W += H;
    w->b = W;
}

/* Parameter layout. GNN: Win[H][F] bin[H], then per round
   Ws[H][H] Wf[H][H] Wb[H][H] af[H] ab[H] b[H].
   SEL head: Wx[H][F] Wh[H][H] Wpb[H][H] Wpt[H][H] b1[H] w2[H] b2.
   PLC head: Wd[H][DF] Wx[H][F] Wh[H][H] WE[H][H] b1[H] w2[H] b2.
   SEL block = GNN + SEL head; PLC block = GNN (unless shared) + PLC head. */
static size_t dp__round_off(int H, int k) { return (size_t)H * DP__F + H + (size_t)k * dp__mp_size(H, DP__MP_BOTH); }
static size_t dp__gnn_size(int H, int K) { return dp__round_off(H, K); }
static size_t dp__selhead_size(int H) { return (size_t)H * DP__F + 3 * (size_t)H * H + 2 * (size_t)H + 1; }
static size_t dp__plchead_size(int H) { return (size_t)H * DP__DF + (size_t)H * DP__F + 2 * (size_t)H * H + 2 * (size_t)H + 1; }

/* The layer's edge feature: edge e's mean transfer time over the links
   (dp__edge_mean: lat + bytes ibw where there are links, else 0) over
   the mean op time (0 where that is 0), made from the graph's bytes where
   it is read (a multiply, an add and a divide) rather than kept: an array
   of a double per edge was a sixth of the learned placer's memory on a
   graph of 10^7 edges. */
typedef struct dp__ef {
    const double *bytes;   /* the graph's, per edge */
    double lat, ibw, mean; /* dp__mean_link's; the mean op time */
    int links;             /* the cluster has more than one device */
} dp__ef;

static void dp__ef_init(dp__ef *f, const dp_graph *g, const dp_cluster *c, double lat, double ibw, double mean)
{
    f->bytes = g->bytes; f->lat = lat; f->ibw = ibw; f->mean = mean; f->links = c->n > 1;
}

static double dp__ef_at(const dp__ef *f, int e)
{
    return f->mean > 0 ? (f->links ? f->lat + f->bytes[e] * f->ibw : 0) / f->mean : 0;
}

typedef struct dp__gnn_buf {
    /* training keeps every round for the backward pass; inference keeps
       one of each (a round may update h in place: dp__mp_forward reads the
       previous round's h whole before it writes, or op by op, an op's own
       row before its own), and DOPPLER's two encoders share pre, mf and mb:
       n H doubles each and 3 n H shared, instead of (4 K + 2) n H each,
       fewer pages to touch per placement */
    double *h;    /* [(K+1) n H] embeddings after each round      */
    double *pre;  /* [(K+1) n H] pre-activations                  */
    double *mf, *mb; /* [K n H] mean messages in / out; DOPPLER's
                     inference: [mrows H], one block of rows at a time */
    int mrows;    /* rows of mf and mb (n: all)                   */
    size_t nH;    /* one round's size                             */
    int keep;     /* every round kept (training)                  */
    double *gh;   /* [n H] gradient w.r.t. the final embedding    */
    double *gtmp; /* [n H] scratch                                 */
    double *gT;   /* [n H] gradient at the pre-activations        */
    double *gM;   /* [n H] gradient w.r.t. the mean messages      */
} dp__gnn_buf;

/* Where all links are alike, op y's placed inputs as the lookahead reads
   them: r1 the latest arrival, from device d1 (-1: none), r2 the latest
   from any other device, own the latest end of those on d1 (up to r2:
   dp__place_step). One record an op: the lookahead and the step each
   meet a successor's four in one cache line. */
typedef struct dp__inputs {
    double r1, r2, own;
    int d1, pad;
} dp__inputs;

typedef struct dp__gctx {
    const dp_graph *g; const dp_cluster *c;
    int n, m, nd, H, K, shared;
    int train;            /* keep every step for the backward pass      */
    int threads;          /* dp__forward's message passes on this many
                             threads (0, 1: the calling thread alone)   */
    double *x;            /* [n F] z-scored op features                */
    dp__ef ef;            /* the edge feature                           */
    double *bl, *tl;      /* b-level, t-level                           */
    double *mt;           /* [n] mean op time over the devices (the
                             features' and the t-level path's)          */
    int *bnext, *tprev;   /* next op on the b-level path / t-level path */
    double *blen, *tlen;  /* ops on those paths, v included            */
    double *optime;       /* [n otw] op times (dp__otime)                */
    int otw;              /* their width: nd, or 1 where every device
                             gives every op the same time (dp__times_width) */
    double scale, lower_bound;
    double unit;          /* mean op time: the scale of start-time gaps  */
    double iscale, iunit; /* 1 / scale, 1 / unit: PLC's features multiply */
    double *wt_sel, *wt_plc; /* the policy's weights, every matrix transposed
                                in place of its block (dp__forward)        */
    dp__gnn_buf gnn[2];
    /* SEL */
    double *pb, *pt, *zsel, *ssel, *gsel_pg, *gsel_fix, *gpb, *gpt, *gzs;
    /* PLC */
    double *A, *P;
    /* rollout state and records */
    int *legal, nlegal, *pend, *assign, *order, *pos;
    double *end, *avail, *work, *psum, *pmean, *cnt, *prob, *logit, *est;
    double *la, *lar, *lam;  /* [nd] the lookahead features' scratch       */
    double *pin, *pinx;   /* [nd] inference: the longest paths to v's inputs
                             (dp__plc_inputs_alike)                        */
    double *xout;         /* [the most outputs of an op] where all links are
                             alike: the step's op's transfer time to each
                             successor (dp__plc_lookahead's, read again by
                             dp__place_step)                               */
    dp__inputs *inr;      /* [n] where all links are alike: each op's
                             placed inputs (dp__place_step)             */
    double *pathe, pathmax; /* inference ([n], else NULL and 0): the
                             longest path to each placed op's end (op
                             times on their devices, transfers between
                             devices), and the longest so far: a lower
                             bound on any simulation's makespan */
    int *expert;          /* the cp expert's choices: [max(n, nd)] in
                             training, [nd] in inference (PLC's mask)     */
    int insertion;        /* the rolled-out policy's dp_policy_opts.insertion
                             (set by dp__rollout): est may fall in an idle
                             gap of the device */
    double *busy;         /* [2 n nd] with insertion: each device's busy
                             blocks [start, end) (placed ops, those that
                             touch joined), by start (busy_n[d] each),
                             block q of device d at 2 (q nd + d), its
                             start and then its end: the devices and both
                             ends interleaved, so that the few blocks in
                             use lie in the first page, not in pages of
                             each device's own n, for each end (2 MiB
                             ones: a sample's context touched up to 8 MB
                             of them for a graph of 10^5 ops with under a
                             dozen blocks a device); carved after every
                             array written whole (dp__sparse_carve), so
                             that their first page is the last one of
                             arrays rollouts write, and no such array's
                             first page their last                       */
    int *busy_n;
    const int *isrc, *odst; /* [m] the ops at the other end of the edges in
                             CSR order: isrc[k] = src[in_edge[k]], odst[k]
                             = dst[out_edge[k]] (the rollout's loops read
                             them in order, not through the edge index);
                             where the CSR order is the edges' own
                             (in_edge[k] = k: a file that lists the edges
                             by target; out_edge, by source), the graph's
                             src or dst itself, not a copy              */
    int alike;            /* every link is alike: an edge's transfer time
                             between any two devices is xlat + its bytes /
                             xbw (dp_xfer_time's, made where it is read:
                             two arrays of a double per edge were a third
                             of the learned placer's memory on a graph of
                             10^7 edges, and no faster)                  */
    double xlat, xbw;
    double *wsel;         /* [n] inference: exp(SEL score - the largest),
                             made by dp__forward, so that a sampled SEL
                             step needs no exp (NULL in training)         */
    double *stree;        /* [2 stn] inference on graphs of more than
                             DP__SEL_TREE ops (else NULL): a sum tree of
                             wsel over the legal array's positions (leaf
                             i at stn + i, node j the sum of 2j, 2j + 1) */
    int stn;              /* its leaves: a power of two >= n              */
    int stree_on;         /* this rollout samples: the tree may be used   */
    int stree_live;       /* the tree is kept as the legal set changes:
                             from the first draw from a set of more than
                             DP__SEL_TREE ops until it falls below a
                             quarter of that (dp__stree_sync)            */
    int stree_hi;         /* every leaf from here on is 0                 */
    dp__opheap selq;      /* inference on graphs of more than DP__SEL_TREE
                             ops: the legal ops by SEL score (ties the
                             lower index), for greedy steps on a large
                             legal set; an op chosen by the scan stays in
                             it, placed, and is dropped when it surfaces */
    int selq_on;          /* this rollout is greedy: the heap may be used  */
    int selq_live;        /* the heap is kept as the legal set grows: from
                             the first greedy step on a set of more than
                             DP__SEL_TREE ops until it falls below a
                             quarter of that (dp__selq_sync)              */
    int *step_op, *step_dev; /* [n] each step's op and device (training; in
                             inference [1], unused: order and assign say it) */
    double *step_f, *step_z, *step_gu, *step_gf;
    double *step_cs;      /* [n DP__CF] the critic's input at each step    */
    double  crem, wtot;   /* the unplaced ops' work, all ops' work (each op's
                             mean time over the devices; the critic's)     */
    double *step_lp, *step_adv; /* [2n] the choices' log-probabilities (step t:
                                   SEL's at 2t, PLC's at 2t + 1); [n] each
                                   step's return correction (training)    */
    double *phi, *bstep;  /* [n] partial makespan before step t; its baseline
                             (training; [1] each in inference, unused)     */
    /* backward scratch */
    double *G, *snap, *gAP, *prio; /* gAP [n][2H]: gA_v then gP_v     */
    int *best_assign, *best_order;
    /* device memory (a cluster with limits only; else mlim 0 and NULLs):
       the static memory of the ops placed so far (dp__mem), each step's
       devices where the op fits (PLC's mask), and whether the rollout
       met a dead end (an op that fit nowhere went to the device with the
       most room: over its memory) */
    int mlim, overfull, deadend;
    dp__mem mem;
    char *mfit;           /* [nd] */
    double *mdead;        /* [nd] each device's bytes in use at the dead end */
    double pen;           /* an over-full placement's cost added (dp__cost) */
    void *arena;          /* every buffer above lives in this one block,  */
    void *larena;         /* but in inference those only the setup or the
                             network pass reads, in three more, each freed
                             as soon as they are done with it, so that
                             the pass's peak stays below the rollouts'
                             (and the simulator made after the pass:
                             dp__gctx_sim): the levels and mean op times
                             (bl, tl, mt: the features') in this one, at
                             the end of the setup (dp__gctx_init_nt); */
    void *sarena;         /* the encoders' scratch (their pre-activations
                             and one block of messages at a time, SEL's
                             pb, pt and zsel) and after it the critical
                             paths (bnext, tprev, blen, tlen: SEL's head
                             reads them) in this one, after PLC's encoder
                             (dp__gctx_drop_scratch); */
    void *harena;         /* the op features x and the encoders' outputs
                             (gnn[].h: one buffer in inference, SEL's
                             embeddings until its head has read them, then
                             PLC's) in this one, after PLC's head
                             (dp__gctx_drop_forward)                     */
    dp_sim sim;           /* its op times are optime                       */
    /* training statistics */
    double baseline, best, adv_sq;
    int seen;
} dp__gctx;

/* Synchronous rounds in inference make their mean messages for this
   many ops at a time (even: dp__gemm pairs rows, so that a block's rows
   pair as the whole's do), not for all n at once (2 n H doubles less at
   the network pass's peak). */
#define DP__MSG_ROWS 16384

/* Buffers of a stack of R rounds over n ops, the embeddings h from ha,
   the rest from a; share: in inference, a buffer b reuses whole, its
   embeddings included (DOPPLER's PLC encoder runs after SEL's head, the
   last reader of SEL's embeddings); mrows: in inference, the rows of
   messages made at a time (0: all n; synchronous rounds only,
   dp__mp_forward). */
static void dp__gnn_buf_carve(dp__arena *a, dp__arena *ha, dp__gnn_buf *b, int n, int H, int R, int train, const dp__gnn_buf *share,
                              int mrows)
{
    size_t nH = (size_t)n * H, ng = train ? nH : 1;
    b->nH = nH; b->keep = train;
    b->mrows = train || mrows <= 0 || mrows > n ? n : mrows;
    if (!train && share) {
        b->h = share->h; b->pre = share->pre; b->mf = share->mf; b->mb = share->mb; b->mrows = share->mrows;
    } else {
        b->h = (double *)dp__carve(ha, (size_t)(train ? R + 1 : 1) * nH, sizeof(double));
        b->pre = (double *)dp__carve(a, (size_t)(train ? R + 1 : 1) * nH, sizeof(double));
        b->mf = (double *)dp__carve(a, (size_t)(train ? R : 1) * b->mrows * H + 1, sizeof(double));
        b->mb = (double *)dp__carve(a, (size_t)(train ? R : 1) * b->mrows * H + 1, sizeof(double));
    }
    b->gh = (double *)dp__carve(a, ng, sizeof(double));
    b->gtmp = (double *)dp__carve(a, ng, sizeof(double));
    b->gT = (double *)dp__carve(a, ng, sizeof(double));
    b->gM = (double *)dp__carve(a, ng, sizeof(double));
}

/* Round r of base, one of b's per-round buffers (h, pre, mf, mb). */
static double *dp__gnn_round(const dp__gnn_buf *b, double *base, int r) { return base + (size_t)(b->keep ? r : 0) * b->nH; }

static void dp__gctx_free(dp__gctx *x)
{
    if (!x) return;
    DP_FREE(x->arena);
    DP_FREE(x->larena);
    DP_FREE(x->sarena);
    DP_FREE(x->harena);
    dp_sim_free(&x->sim);
    memset(x, 0, sizeof *x);
}

/* Inference, at the end of the setup: the levels and mean op times
   (x->larena), read only to make the op features, freed (24 bytes an
   op). */
static void dp__gctx_drop_levels(dp__gctx *x)
{
    if (x->train) return;
    DP_FREE(x->larena);
    x->larena = NULL;
    x->bl = x->tl = x->mt = NULL;
}

/* Inference, after dp__forward_plc_gnn: the encoders' scratch and the
   critical paths (x->sarena) freed, so that PLC's per-op parts are made
   without them held (2 H doubles and 24 bytes an op, and a block of
   messages). */
static void dp__gctx_drop_scratch(dp__gctx *x)
{
    int e;
    if (x->train) return;
    DP_FREE(x->sarena);
    x->sarena = NULL;
    x->pb = x->pt = x->zsel = NULL;
    x->blen = x->tlen = NULL;
    x->bnext = x->tprev = NULL;
    for (e = 0; e < 2; e++) x->gnn[e].pre = x->gnn[e].mf = x->gnn[e].mb = x->gnn[e].gh = x->gnn[e].gtmp = x->gnn[e].gT = x->gnn[e].gM = NULL;
}

/* Inference, after dp__forward: what is left of the buffers only the
   network pass reads (the op features and the encoders' embeddings,
   x->harena, and the rest where the drops above did not run) freed, so
   that the rollouts' peak memory does not hold them (about 105 bytes an
   op at the shipped policy's size). */
static void dp__gctx_drop_forward(dp__gctx *x)
{
    if (x->train) return;
    dp__gctx_drop_levels(x);
    dp__gctx_drop_scratch(x);
    DP_FREE(x->harena);
    x->harena = NULL;
    x->x = NULL;
    memset(x->gnn, 0, sizeof x->gnn);
}

/* Mean transfer time of an edge over ordered pairs of distinct devices. */
static double dp__edge_mean(const dp_cluster *c, double bytes, double lat, double ibw)
{
    return c->n > 1 ? lat + bytes * ibw : 0;
}

/* Columns 0..cols-1 of X[n][stride] to z-scores (0 where constant). */
static void dp__zscore(double *X, int n, int stride, int cols)
{
    int f, v;
    for (f = 0; f < cols; f++) {
        double mu = 0, sd = 0;
        for (v = 0; v < n; v++) mu += X[(size_t)v * stride + f];
        mu /= n;
        for (v = 0; v < n; v++) { double d = X[(size_t)v * stride + f] - mu; sd += d * d; }
        sd = sqrt(sd / n);
        for (v = 0; v < n; v++) X[(size_t)v * stride + f] = sd > 1e-12 * (fabs(mu) + 1e-300) ? (X[(size_t)v * stride + f] - mu) / sd : 0;
    }
}

/* FNV-1a, 64 bits: h (DP__FNV_OFFSET to begin) after n more bytes, or
   after a word's 8 bytes, the least significant first (the same on any
   host). The policy file's checksum and dp__graph_key use it. */
#define DP__FNV_OFFSET 1469598103934665603ULL
static uint64_t dp__fnv_add(uint64_t h, const unsigned char *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ULL; }
    return h;
}

static uint64_t dp__fnv_word(uint64_t h, uint64_t w)
{
    unsigned char b[8];
    int k;
    for (k = 0; k < 8; k++) b[k] = (unsigned char)(w >> (8 * k));
    return dp__fnv_add(h, b, 8);
}

static uint64_t dp__fnv_double(uint64_t h, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return dp__fnv_word(h, bits);
}

/* The graph and cluster a policy's op_table belongs to: FNV-1a of the op,
   device and edge counts, each edge's ends and bytes, and every op's time
   on every device (x->optime: the costs and the devices' speeds). */
static uint64_t dp__graph_key(const dp__gctx *x)
{
    const dp_graph *g = x->g;
    uint64_t h = DP__FNV_OFFSET;
    size_t i;
    h = dp__fnv_word(h, (uint64_t)x->n); h = dp__fnv_word(h, (uint64_t)x->nd); h = dp__fnv_word(h, (uint64_t)x->m);
    for (i = 0; i < (size_t)x->m; i++) {
        h = dp__fnv_word(h, (uint64_t)(uint32_t)g->src[i] << 32 | (uint32_t)g->dst[i]);
        h = dp__fnv_double(h, g->bytes[i]);
    }
    for (i = 0; i < (size_t)x->n * x->nd; i++) h = dp__fnv_double(h, dp__otime(x->optime, x->otw, (int)(i / x->nd), (int)(i % x->nd)));
    return h;
}

/* Sampled SEL steps draw from a sum tree (x->stree) where the legal set
   has more ops than this, else by a scan of the legal set (exactly as
   before the tree: graphs this small keep their samples bit for bit). */
#define DP__SEL_TREE 256

/* The rollout's state, every field a rollout writes (dp__rollout,
   dp__cost and a sample's bookkeeping), carved from a (sizing or carving
   pass, as DP__A) for x: by dp__gctx_init for a context, by
   dp__gctx_fork for each other sampling thread's own; those it writes
   only in part later (dp__sparse_carve). x's n, nd, H,
   train, c and alike are set. */
static void dp__rollout_carve(dp__arena *a, dp__gctx *x)
{
    dp__arena ar = *a;   /* DP__A's, handed back at the end */
    int n = x->n, nd = x->nd, H = x->H;
    size_t nt = x->train ? (size_t)n : 1, wide = (size_t)(n > nd ? n : nd);
    DP__A(x->pend, n, int); DP__A(x->assign, n, int); DP__A(x->order, n, int); DP__A(x->pos, n, int);
    DP__A(x->end, n, double); DP__A(x->avail, nd, double); DP__A(x->work, nd, double); DP__A(x->psum, (size_t)nd * H, double);
    DP__A(x->pmean, (size_t)nd * H, double);
    DP__A(x->cnt, nd, double); DP__A(x->logit, nd, double); DP__A(x->est, nd, double);
    DP__A(x->la, nd, double); DP__A(x->lar, nd, double); DP__A(x->lam, nd, double); DP__A(x->pin, nd, double); DP__A(x->pinx, nd, double);
    if (x->alike) {
        int v, most = 0;
        for (v = 0; v < n; v++) if (x->g->out_off[v + 1] - x->g->out_off[v] > most) most = x->g->out_off[v + 1] - x->g->out_off[v];
        DP__A(x->inr, n, dp__inputs);
        DP__A(x->xout, most, double);
    }
    if (!x->train) DP__A(x->pathe, n, double);
    DP__A(x->busy_n, nd, int);   /* x->busy: dp__sparse_carve */
    DP__A(x->expert, x->train ? wide : (size_t)nd, int);   /* inference: PLC's only */
    DP__A(x->step_op, nt, int); DP__A(x->step_dev, nt, int); DP__A(x->step_f, nt * nd * DP__DF, double);
    DP__A(x->step_z, nt * nd * H, double); DP__A(x->step_gu, nt * nd, double); DP__A(x->step_gf, nt * nd, double);
    DP__A(x->phi, nt, double); DP__A(x->best_assign, n, int); DP__A(x->best_order, n, int);   /* x->prio: dp__sparse_carve */
    if (dp__limited(x->c)) { DP__A(x->mem.used, nd, double); DP__A(x->mem.held, dp__mem_words(x->g) + 1, uint64_t); DP__A(x->mfit, nd, char); DP__A(x->mdead, nd, double); }
    *a = ar;
}

/* The rollout's arrays written only in part, carved after every other
   array of the context, so that the pages of those written whole are not
   shared with their unwritten parts (with 2 MiB pages, an unwritten array
   between two written ones costs whole pages), the most often written
   first: the legal set and its probabilities (as many as the widest
   legal set), the greedy steps' heap (as many as the legal set; the
   placing context only, selq), SEL's sum tree (whole, but only where a
   legal set is wider than DP__SEL_TREE), the busy blocks (the first
   few; see there), then the scores' priorities (written whole, but only
   where placements are scored by priority: dp__score_opts). */
static void dp__sparse_carve(dp__arena *a, dp__gctx *x, int selq)
{
    dp__arena ar;   /* DP__A's */
    int n = x->n, nd = x->nd;
    dp__arena_sparse(a);
    ar = *a;
    DP__A(x->legal, n, int); DP__A(x->prob, n > nd ? n : nd, double);
    if (selq && !x->train && n > DP__SEL_TREE) DP__A(x->selq.h, n, int);
    if (!x->train && n > DP__SEL_TREE) {
        for (x->stn = 1; x->stn < n; x->stn *= 2) {}
        DP__A(x->stree, 2 * (size_t)x->stn, double);
        x->stree_hi = x->stn;   /* the first dp__stree_sync clears every leaf */
    }
    DP__A(x->busy, 2 * (size_t)nd * n, double);
    DP__A(x->prio, n, double);
    *a = ar;
}

/* dp__gctx_init's passes over every op and edge, in parts (dp__par_for),
   each writing only its own ops' or CSR positions' values. */
typedef struct dp__gctx_par {
    dp__gctx *x;
    int *isrc, *odst;     /* x's copies to fill, NULL where x reads the
                             graph's own src or dst (dp__csr_is_edges)  */
    double lat, ibw;      /* dp__mean_link's                           */
    int levels;           /* 0: the op times and edge sums; 1: what
                             needs the b- and t-levels                  */
} dp__gctx_par;

static void dp__gctx_csr_part(void *ctx, int lo, int hi)
{
    const dp__gctx_par *ip = (const dp__gctx_par *)ctx;
    const dp_graph *g = ip->x->g;
    int k;
    if (ip->isrc) for (k = lo; k < hi; k++) ip->isrc[k] = g->src[g->in_edge[k]];
    if (ip->odst) for (k = lo; k < hi; k++) ip->odst[k] = g->dst[g->out_edge[k]];
}

/* Whether a CSR order of m edges is the edges' own: idx[k] = k (dp__csr's
   for a graph whose edges come sorted by that end). */
static int dp__csr_is_edges(const int *idx, int m)
{
    int k;
    for (k = 0; k < m && idx[k] == k; k++) {}
    return k == m;
}

static void dp__gctx_ops_part(void *ctx, int lo, int hi)
{
    const dp__gctx_par *ip = (const dp__gctx_par *)ctx;
    dp__gctx *x = ip->x;
    const dp_graph *g = x->g;
    const dp_cluster *c = x->c;
    int nd = x->nd, v, k;
    for (v = lo; v < hi; v++) {
        double *r = x->x + (size_t)v * DP__F;
        if (!ip->levels) {
            /* op times and their mean (dp__mean_time's sum, in its order);
               the raw features' input and output transfer sums */
            double s = 0, in = 0, out = 0;
            if (x->otw == 1) {   /* one time for every device: the same sum */
                double t = x->optime[v] = dp_op_time(g, c, v, 0);
                for (k = 0; k < nd; k++) s += t;
            } else
                for (k = 0; k < nd; k++) s += x->optime[(size_t)v * nd + k] = dp_op_time(g, c, v, k);
            x->mt[v] = s / nd;
            for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) in += dp__edge_mean(c, g->bytes[g->in_edge[k]], ip->lat, ip->ibw);
            for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) out += dp__edge_mean(c, g->bytes[g->out_edge[k]], ip->lat, ip->ibw);
            r[3] = in; r[4] = out;
        } else {
            /* the other raw features; the b-level path follows the
               successor that gives the b-level, the t-level path the
               predecessor that gives the t-level (the first of equals) */
            double best = -1;
            r[0] = x->mt[v]; r[1] = x->bl[v]; r[2] = x->tl[v];
            x->bnext[v] = -1;
            for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
                int ed = g->out_edge[k], w = g->dst[ed];
                double val = dp__edge_mean(c, g->bytes[ed], ip->lat, ip->ibw) + x->bl[w];
                if (val > best) { best = val; x->bnext[v] = w; }
            }
            best = -1;
            x->tprev[v] = -1;
            for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
                int ed = g->in_edge[k], u = g->src[ed];
                double val = x->tl[u] + x->mt[u] + dp__edge_mean(c, g->bytes[ed], ip->lat, ip->ibw);
                if (val > best) { best = val; x->tprev[v] = u; }
            }
        }
    }
}

/* x's simulator, its op times x->optime: made by dp__gctx_init_nt for
   training; in inference by its caller, once the network pass is done
   (its workspace's first page, written when it is made, is then not
   held through the pass). */
static int dp__gctx_sim(dp__gctx *x, dp_error *err)
{
    return dp__sim_init_times(&x->sim, x->g, x->c, x->optime, err);
}

/* A context for g on c; its passes over the graph on `threads` threads
   (0, 1: the calling thread alone; the same values on any number); in
   inference without its simulator (dp__gctx_sim). */
static int dp__gctx_init_nt(dp__gctx *x, const dp_graph *g, const dp_cluster *c, int H, int K, int shared,
                            int train, int threads, dp_error *err)
{
    int n = g->n_ops, m = g->n_edges, nd = c->n, i, k, v, e, rc, pass, alike;
    size_t nH = (size_t)n * H, nt = train ? (size_t)n : 1, ng = train ? nH : 1;
    double lat, ibw, mean_t = 0;
    dp__gctx_par ip;
    dp__arena ar, lr, sr, hr;   /* in inference, the levels, scratch (and paths) and features apart: */
    dp__arena *la = train ? &ar : &lr, *sa = train ? &ar : &sr, *ha = train ? &ar : &hr;
    int in_own, out_own;  /* isrc, odst: copies (else the graph's src, dst) */
    memset(&ar, 0, sizeof ar);
    memset(&lr, 0, sizeof lr);
    memset(&sr, 0, sizeof sr);
    memset(&hr, 0, sizeof hr);
    memset(x, 0, sizeof *x);
    memset(&ip, 0, sizeof ip);
    if ((rc = dp_check(g, c, err))) return rc;
    in_own = !dp__csr_is_edges(g->in_edge, m);
    out_own = !dp__csr_is_edges(g->out_edge, m);
    alike = dp__links_alike(c);   /* x->alike (and x->inr) only then */
    x->g = g; x->c = c; x->n = n; x->m = m; x->nd = nd; x->H = H; x->K = K; x->shared = shared; x->train = train; x->alike = alike;
    x->otw = dp__times_width(g, c);
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &x->arena, err, "learning workspace"))) { dp__gctx_free(x); return rc; }
        if (pass && !train && (rc = dp__arena_alloc(&lr, &x->larena, err, "learning workspace"))) { dp__gctx_free(x); return rc; }
        if (pass && !train && (rc = dp__arena_alloc(&sr, &x->sarena, err, "learning workspace"))) { dp__gctx_free(x); return rc; }
        if (pass && !train && (rc = dp__arena_alloc(&hr, &x->harena, err, "learning workspace"))) { dp__gctx_free(x); return rc; }
        x->x = (double *)dp__carve(ha, (size_t)n * DP__F, sizeof(double));
        x->bl = (double *)dp__carve(la, (size_t)n, sizeof(double)); x->tl = (double *)dp__carve(la, (size_t)n, sizeof(double));
        x->mt = (double *)dp__carve(la, (size_t)n, sizeof(double));
        DP__A(x->optime, (size_t)n * x->otw, double);
        for (e = 0; e < (shared ? 1 : 2); e++)
            dp__gnn_buf_carve(sa, ha, &x->gnn[e], n, H, K, train, e ? &x->gnn[0] : NULL, DP__MSG_ROWS);
        if (train) { DP__A(x->pb, nH, double); DP__A(x->pt, nH, double); DP__A(x->zsel, nH, double); }
        else {
            /* SEL's head runs after its encoder, in its scratch: pb in the
               pre-activations, zsel (a block of rows at a time) in the
               messages, pt of its own */
            x->pb = x->gnn[0].pre; x->zsel = x->gnn[0].mb;
            x->pt = (double *)dp__carve(sa, nH, sizeof(double));
        }
        /* the paths after the scratch (in inference, its pages the setup
           writes before the pass) */
        x->bnext = (int *)dp__carve(sa, (size_t)n, sizeof(int)); x->tprev = (int *)dp__carve(sa, (size_t)n, sizeof(int));
        x->blen = (double *)dp__carve(sa, (size_t)n, sizeof(double)); x->tlen = (double *)dp__carve(sa, (size_t)n, sizeof(double));
        /* what SEL's part of the network pass writes in this block, after
           the op times: pages next to theirs */
        DP__A(x->wt_sel, dp__gnn_size(H, K) + dp__selhead_size(H), double);
        DP__A(x->wt_plc, (shared ? 0 : dp__gnn_size(H, K)) + dp__plchead_size(H), double);
        DP__A(x->ssel, n, double);
        if (!train) DP__A(x->wsel, n, double);
        DP__A(x->gsel_pg, nt, double); DP__A(x->gsel_fix, nt, double); DP__A(x->gpb, ng, double); DP__A(x->gpt, ng, double); DP__A(x->gzs, ng, double);
        DP__A(x->A, nH, double); DP__A(x->P, nH, double);
        dp__rollout_carve(&ar, x);
        if (in_own) DP__A(ip.isrc, m, int);
        if (out_own) DP__A(ip.odst, m, int);
        DP__A(x->bstep, nt, double);   /* training's */
        DP__A(x->step_lp, 2 * nt, double); DP__A(x->step_adv, nt, double); DP__A(x->step_cs, nt * DP__CF, double);
        DP__A(x->G, (size_t)nd * H, double); DP__A(x->snap, ng, double); DP__A(x->gAP, 2 * ng, double);
        dp__sparse_carve(&ar, x, 1);
    }
    x->mlim = dp__limited(c);
    x->mem.g = g; x->mem.c = c;
    if (x->mlim) {
        /* more than any makespan: every op on its slowest device in turn,
           then every edge on the slowest link (dp_check's bound) */
        double pen = dp__slowest_work(g, c), wib = 0, wlat = 0;
        for (k = 0; k < nd * nd; k++) {
            if (k / nd == k % nd) continue;
            if (1 / c->bandwidth[k] > wib) wib = 1 / c->bandwidth[k];
            if (c->latency[k] > wlat) wlat = c->latency[k];
        }
        for (e = 0; e < m; e++) pen += g->bytes[e] * wib + wlat;
        x->pen = pen > 0 ? pen : 1;
    }
    if (train && (rc = dp__gctx_sim(x, err))) { dp__gctx_free(x); return rc; }
    if (alike) { x->xlat = c->latency[1]; x->xbw = c->bandwidth[1]; }   /* the link 0 -> 1, as every other */
    dp__mean_link(c, &lat, &ibw);
    ip.x = x; ip.lat = lat; ip.ibw = ibw;
    x->isrc = in_own ? ip.isrc : g->src;
    x->odst = out_own ? ip.odst : g->dst;
    if (in_own || out_own) dp__par_for(threads, m, dp__gctx_csr_part, &ip);
    dp__par_for(threads, n, dp__gctx_ops_part, &ip);
    x->wtot = 0;
    for (k = 0; k < n * nd; k++) x->wtot += dp__otime(x->optime, x->otw, k / nd, k % nd) / nd;
    dp_blevel(g, c, x->bl);
    dp__tlevel(g, c, x->mt, x->tl);
    if ((rc = dp__lower_bound(g, c, &x->lower_bound, err))) { dp__gctx_free(x); return rc; }
    x->scale = x->lower_bound > 0 ? x->lower_bound : 1;
    ip.levels = 1;
    dp__par_for(threads, n, dp__gctx_ops_part, &ip);
    for (v = 0; v < n; v++) mean_t += x->x[(size_t)v * DP__F];
    mean_t /= n;
    x->unit = mean_t > 0 ? mean_t : 1;
    x->iscale = 1 / x->scale; x->iunit = 1 / x->unit;
    dp__zscore(x->x, n, DP__F, DP__F);
    dp__ef_init(&x->ef, g, c, lat, ibw, mean_t);
    /* the ops on each path, v's own and those after it (before it) */
    for (i = n - 1; i >= 0; i--) {
        v = g->topo[i];
        x->blen[v] = 1 + (x->bnext[v] >= 0 ? x->blen[x->bnext[v]] : 0);
    }
    for (i = 0; i < n; i++) {
        v = g->topo[i];
        x->tlen[v] = 1 + (x->tprev[v] >= 0 ? x->tlen[x->tprev[v]] : 0);
    }
    x->threads = threads;
    dp__gctx_drop_levels(x);   /* inference: read only by the features above */
    return 0;
}

/* A context on the calling thread alone, its simulator made (in
   inference too: dp_policy_place makes it after the network pass). */
static int dp__gctx_init(dp__gctx *x, const dp_graph *g, const dp_cluster *c, int H, int K, int shared,
                         int train, dp_error *err)
{
    int rc = dp__gctx_init_nt(x, g, c, H, K, shared, train, 1, err);
    if (!rc && !train && (rc = dp__gctx_sim(x, err))) dp__gctx_free(x);
    return rc;
}

/* ======================================================================
   >>gnn
   One message-passing layer serves both learned placers:
     input layer   h0_v = relu(Win x_v + bin)
     round         h'_v = h_v + relu(Ws h_v + Wf mean_{u->v}(s_u + c_e af)
                                         + Wb mean_{v->w}(s_w + c_e ab) + b)
   In mode BOTH (DOPPLER) the sources s are the round's inputs h and both
   directions are used: a synchronous round. In mode FWD (Placeto's forward
   pass) only the parents are used and s = h', the round's own outputs,
   computed in topological order: progressive message passing, so one round
   carries information from every ancestor. Mode BWD is the mirror image
   (children only, reverse topological order). Directional rounds store no
   unused block: FWD is Ws Wf af b, BWD is Ws Wb ab b.
   ====================================================================== */
/* The k-th op a round of this mode visits. */
static int dp__mp_op(const dp_graph *g, dp__mp_mode mode, int k)
{
    return mode == DP__MP_BOTH ? k : mode == DP__MP_FWD ? g->topo[k] : g->topo[g->n_ops - 1 - k];
}

/* Wt gets one round's weights with its H x H blocks (Ws, then Wf and/or
   Wb) transposed in place; the vectors are not copied (never read). */
static void dp__mp_transpose(double *Wt, const double *W, int H, dp__mp_mode mode)
{
    int k, nb = mode == DP__MP_BOTH ? 3 : 2;
    size_t HH = (size_t)H * H;
    for (k = 0; k < nb; k++) dp__transpose(Wt + k * HH, W + k * HH, H, H);
}

/* h[n][H] = relu(pre), pre = Win X + bin; W = Win[H][F] then bin[H];
   Wt starts with Win^T [F][H]. */
static void dp__mp_input(int n, int H, int F, const double *X, const double *W, const double *Wt, double *pre, double *h)
{
    int v, i;
    for (v = 0; v < n; v++) memcpy(pre + (size_t)v * H, W + (size_t)H * F, sizeof(double) * (size_t)H);
    dp__gemm(pre, (size_t)H, X, (size_t)F, Wt, n, F, H);
    for (i = 0; i < n * H; i++) h[i] = dp__relu(pre[i]);
}

/* T: scratch [n][H] */
static void dp__mp_input_backward(int n, int H, int F, const double *X, const double *pre, const double *gh, double *gW, double *T)
{
    dp__relu_mask(T, gh, pre, (size_t)n * H);
    dp__colsum(gW + (size_t)H * F, T, (size_t)H, n, H);
    dp__gemm_tn(gW, T, (size_t)H, X, (size_t)F, n, H, F);
}

/* The mean message into v (FWD: over its parents, from the af direction)
   or out of v (BWD: over its children), of the sources src, into m[H]. */
static void dp__mp_mean(const dp_graph *g, const dp__ef *ef, int H, int fwd, const double *a, const double *src, int v, double *m)
{
    int lo = fwd ? g->in_off[v] : g->out_off[v], hi = fwd ? g->in_off[v + 1] : g->out_off[v + 1], k, i;
    memset(m, 0, sizeof(double) * (size_t)H);
    for (k = lo; k < hi; k++) {
        int e = fwd ? g->in_edge[k] : g->out_edge[k];
        const double *hu = src + (size_t)(fwd ? g->src[e] : g->dst[e]) * H;
        double ce = dp__ef_at(ef, e);
        for (i = 0; i < H; i++) m[i] += hu[i] + ce * a[i];
    }
    if (hi > lo) for (i = 0; i < H; i++) m[i] /= hi - lo;
}

/* A synchronous round's mean messages of ops first + lo..first + hi-1
   (dp__par_for), into rows lo..hi-1 of mf and mb. */
typedef struct dp__mp_means {
    const dp_graph *g; const dp__ef *ef; int H, first;
    const double *af, *ab, *hp;
    double *mf, *mb;
} dp__mp_means;

static void dp__mp_means_part(void *ctx, int lo, int hi)
{
    const dp__mp_means *a = (const dp__mp_means *)ctx;
    int q;
    for (q = lo; q < hi; q++) {
        dp__mp_mean(a->g, a->ef, a->H, 1, a->af, a->hp, a->first + q, a->mf + (size_t)q * a->H);
        dp__mp_mean(a->g, a->ef, a->H, 0, a->ab, a->hp, a->first + q, a->mb + (size_t)q * a->H);
    }
}

/* One round: hp[n][H] in, hn[n][H] out, pr the pre-activations; mf and mb
   keep the mean messages for the backward pass (NULL where unused). W the
   round's weights, Wt the same with its matrices transposed
   (dp__mp_transpose). A synchronous round is three matrix products over
   all ops, its messages (a pass over every edge, both ways) made by nt
   threads (each op's own: the same values on any number), mrows ops at a
   time where mf and mb hold that many rows (inference; <= 0 or >= n: all
   at once), each block's products added to its rows of pr before the
   next block's messages overwrite it (each row's sums in the same order:
   the same values); a progressive
   one does the Ws part for all ops at once, then visits the ops in order,
   each one's message depending on the new values of those visited before
   it. */
static void dp__mp_forward(const dp_graph *g, const dp__ef *ef, int H, dp__mp_mode mode, const double *W, const double *Wt,
                           const double *hp, double *hn, double *pr, double *mf, double *mb, int mrows, int nt)
{
    dp__mp_w w, wt;
    int n = g->n_ops, v, q, i;
    dp__mp_map(&w, (double *)W, H, mode);
    dp__mp_map(&wt, (double *)Wt, H, mode);
    for (v = 0; v < n; v++) memcpy(pr + (size_t)v * H, w.b, sizeof(double) * (size_t)H);
    dp__gemm(pr, (size_t)H, hp, (size_t)H, wt.ws, n, H, H);
    if (mode == DP__MP_BOTH) {
        dp__mp_means ms;
        int rows = mrows > 0 && mrows < n ? mrows : n, len;
        ms.g = g; ms.ef = ef; ms.H = H; ms.af = w.af; ms.ab = w.ab; ms.hp = hp; ms.mf = mf; ms.mb = mb;
        for (ms.first = 0; ms.first < n; ms.first += len) {
            double *py = pr + (size_t)ms.first * H;
            len = n - ms.first < rows ? n - ms.first : rows;
            dp__par_for(nt, len, dp__mp_means_part, &ms);
            dp__gemm(py, (size_t)H, mf, (size_t)H, wt.wf, len, H, H);
            dp__gemm(py, (size_t)H, mb, (size_t)H, wt.wb, len, H, H);
        }
        for (i = 0; i < n * H; i++) hn[i] = hp[i] + dp__relu(pr[i]);
        return;
    }
    for (q = 0; q < n; q++) {
        int fwd = mode == DP__MP_FWD;
        double *m = (fwd ? mf : mb) + (size_t)(v = dp__mp_op(g, mode, q)) * H, *pre = pr + (size_t)v * H;
        dp__mp_mean(g, ef, H, fwd, fwd ? w.af : w.ab, hn, v, m);
        dp__gemm(pre, (size_t)H, m, (size_t)H, fwd ? wt.wf : wt.wb, 1, H, H);
        for (i = 0; i < H; i++) hn[(size_t)v * H + i] = hp[(size_t)v * H + i] + dp__relu(pre[i]);
    }
}

/* Scatters the gradient gm[H] of v's mean message (fwd: over its parents)
   to the sources' gradients gsrc and the edge-feature weights' gradient ga. */
static void dp__mp_mean_backward(const dp_graph *g, const dp__ef *ef, int H, int fwd, int v, const double *gm,
                                 double *gsrc, double *ga)
{
    int lo = fwd ? g->in_off[v] : g->out_off[v], hi = fwd ? g->in_off[v + 1] : g->out_off[v + 1], k, i, deg = hi - lo;
    for (k = lo; k < hi; k++) {
        int e = fwd ? g->in_edge[k] : g->out_edge[k];
        double *gu = gsrc + (size_t)(fwd ? g->src[e] : g->dst[e]) * H, s = dp__ef_at(ef, e) / deg;
        for (i = 0; i < H; i++) { gu[i] += gm[i] / deg; ga[i] += s * gm[i]; }
    }
}

/* Backward through one round. gh: gradient w.r.t. hn (in a progressive
   round it still grows while the ops are visited in reverse; destroyed);
   gp: gradient w.r.t. hp (written); gW accumulated; T and GM scratch
   [n][H] (the gradients at the pre-activations and at the messages). */
static void dp__mp_backward(const dp_graph *g, const dp__ef *ef, int H, dp__mp_mode mode, const double *W, double *gW,
                            const double *hp, const double *pr, const double *mf, const double *mb,
                            double *gh, double *gp, double *T, double *GM)
{
    dp__mp_w w, gw;
    int n = g->n_ops, v, j;
    size_t nH = (size_t)n * H;
    dp__mp_map(&w, (double *)W, H, mode);
    dp__mp_map(&gw, gW, H, mode);
    if (mode == DP__MP_BOTH) {
        dp__relu_mask(T, gh, pr, nH);
        memset(GM, 0, sizeof(double) * nH);
        dp__gemm(GM, (size_t)H, T, (size_t)H, w.wf, n, H, H);
        memcpy(gp, gh, sizeof(double) * nH);   /* the residual path */
        for (v = 0; v < n; v++) dp__mp_mean_backward(g, ef, H, 1, v, GM + (size_t)v * H, gp, gw.af);
        memset(GM, 0, sizeof(double) * nH);
        dp__gemm(GM, (size_t)H, T, (size_t)H, w.wb, n, H, H);
        for (v = 0; v < n; v++) dp__mp_mean_backward(g, ef, H, 0, v, GM + (size_t)v * H, gp, gw.ab);
        dp__gemm_tn(gw.wf, T, (size_t)H, mf, (size_t)H, n, H, H);
        dp__gemm_tn(gw.wb, T, (size_t)H, mb, (size_t)H, n, H, H);
    } else {
        /* reverse of the forward visit: v's gradient is final once every
           op visited after it has handed its message gradient back */
        int fwd = mode == DP__MP_FWD;
        for (j = n - 1; j >= 0; j--) {
            double *gm = GM + (size_t)(v = dp__mp_op(g, mode, j)) * H;
            dp__relu_mask(T + (size_t)v * H, gh + (size_t)v * H, pr + (size_t)v * H, (size_t)H);
            memset(gm, 0, sizeof(double) * (size_t)H);
            dp__gemm(gm, (size_t)H, T + (size_t)v * H, (size_t)H, fwd ? w.wf : w.wb, 1, H, H);
            dp__mp_mean_backward(g, ef, H, fwd, v, gm, gh, fwd ? gw.af : gw.ab);
        }
        memcpy(gp, gh, sizeof(double) * nH);   /* the residual path */
        dp__gemm_tn(fwd ? gw.wf : gw.wb, T, (size_t)H, fwd ? mf : mb, (size_t)H, n, H, H);
    }
    dp__colsum(gw.b, T, (size_t)H, n, H);
    dp__gemm_tn(gw.ws, T, (size_t)H, hp, (size_t)H, n, H, H);
    dp__gemm(gp, (size_t)H, T, (size_t)H, w.ws, n, H, H);
}

/* Transposed copy of a DOPPLER GNN block (input layer and K rounds). */
static void dp__gnn_transpose(double *Wt, const double *W, int H, int K)
{
    int r;
    dp__transpose(Wt, W, H, DP__F);
    for (r = 0; r < K; r++) dp__mp_transpose(Wt + dp__round_off(H, r), W + dp__round_off(H, r), H, DP__MP_BOTH);
}

/* DOPPLER's encoder: the input layer, then K synchronous rounds. */
static void dp__gnn_forward(dp__gctx *x, dp__gnn_buf *b, const double *W, const double *Wt)
{
    int r;
    dp__mp_input(x->n, x->H, DP__F, x->x, W, Wt, b->pre, b->h);
    for (r = 0; r < x->K; r++)
        dp__mp_forward(x->g, &x->ef, x->H, DP__MP_BOTH, W + dp__round_off(x->H, r), Wt + dp__round_off(x->H, r),
                       dp__gnn_round(b, b->h, r), dp__gnn_round(b, b->h, r + 1), dp__gnn_round(b, b->pre, r + 1),
                       dp__gnn_round(b, b->mf, r), dp__gnn_round(b, b->mb, r), b->mrows, x->threads);
}

static const double *dp__gnn_out(const dp__gctx *x, const dp__gnn_buf *b)
{
    return dp__gnn_round(b, b->h, x->K);
}

/* Backward from b->gh (gradient w.r.t. the final embedding, destroyed)
   into the parameter gradient gW. */
static void dp__gnn_backward(dp__gctx *x, dp__gnn_buf *b, const double *W, double *gW)
{
    int r;
    for (r = x->K - 1; r >= 0; r--) {
        dp__mp_backward(x->g, &x->ef, x->H, DP__MP_BOTH, W + dp__round_off(x->H, r), gW + dp__round_off(x->H, r),
                        dp__gnn_round(b, b->h, r), dp__gnn_round(b, b->pre, r + 1),
                        dp__gnn_round(b, b->mf, r), dp__gnn_round(b, b->mb, r), b->gh, b->gtmp, b->gT, b->gM);
        memcpy(b->gh, b->gtmp, sizeof(double) * b->nH);
    }
    dp__mp_input_backward(x->n, x->H, DP__F, x->x, b->pre, b->gh, gW, b->gT);
}

/* ======================================================================
   >>episode
   dp__forward: GNN(s), SEL scores, PLC per-op projections.
   dp__rollout: one placement, recording what the backward pass needs.
   dp__backward: gradients of the episode loss into gsel / gplc.
   ====================================================================== */
typedef struct dp__heads {
    /* pointers into the parameter (or gradient) buffers */
    double *gnn_sel, *gnn_plc;
    double *s_wx, *s_wh, *s_wpb, *s_wpt, *s_b1, *s_w2, *s_b2;
    double *p_wd, *p_wx, *p_wh, *p_we, *p_b1, *p_w2, *p_b2;
} dp__heads;

static void dp__heads_map(dp__heads *h, double *sel, double *plc, int H, int K, int shared)
{
    double *s = sel + dp__gnn_size(H, K), *p = plc + (shared ? 0 : dp__gnn_size(H, K));
    size_t HH = (size_t)H * H;
    h->gnn_sel = sel;
    h->gnn_plc = shared ? sel : plc;
    h->s_wx = s; s += (size_t)H * DP__F;
    h->s_wh = s; s += HH; h->s_wpb = s; s += HH; h->s_wpt = s; s += HH;
    h->s_b1 = s; s += H; h->s_w2 = s; s += H; h->s_b2 = s;
    h->p_wd = p; p += (size_t)H * DP__DF; h->p_wx = p; p += (size_t)H * DP__F;
    h->p_wh = p; p += HH; h->p_we = p; p += HH;
    h->p_b1 = p; p += H; h->p_w2 = p; p += H; h->p_b2 = p;
}

static const double *dp__emb_sel(const dp__gctx *x) { return dp__gnn_out(x, &x->gnn[0]); }
static const double *dp__emb_plc(const dp__gctx *x) { return dp__gnn_out(x, &x->gnn[x->shared ? 0 : 1]); }

/* The transposed weights of p into x->wt_sel / wt_plc (same layout). */
static void dp__transpose_policy(dp__gctx *x, const dp_policy *p)
{
    dp__heads w, t;
    int H = x->H, K = x->K;
    dp__heads_map(&w, p->sel, p->plc, H, K, x->shared);
    dp__heads_map(&t, x->wt_sel, x->wt_plc, H, K, x->shared);
    dp__gnn_transpose(t.gnn_sel, w.gnn_sel, H, K);
    if (!x->shared) dp__gnn_transpose(t.gnn_plc, w.gnn_plc, H, K);
    dp__transpose(t.s_wx, w.s_wx, H, DP__F);
    dp__transpose(t.s_wh, w.s_wh, H, H); dp__transpose(t.s_wpb, w.s_wpb, H, H); dp__transpose(t.s_wpt, w.s_wpt, H, H);
    dp__transpose(t.p_wd, w.p_wd, H, DP__DF); dp__transpose(t.p_wx, w.p_wx, H, DP__F);
    dp__transpose(t.p_wh, w.p_wh, H, H); dp__transpose(t.p_we, w.p_we, H, H);
}

/* The network pass (dp__forward) in three parts, each reading only what
   the parts before it made: SEL's encoder and scores; PLC's encoder (none
   where the encoder is shared; in inference it overwrites SEL's
   embeddings and scratch, which SEL's head was the last to read); PLC's
   per-op parts, which read only the op features and PLC's embeddings.
   Inference frees the encoders' scratch and the paths before the last
   part (dp__gctx_drop_scratch), so that the pass's peak stays below the
   rollouts'. */
static void dp__forward_sel(dp__gctx *x, const dp_policy *p)
{
    dp__heads w, t;
    int n = x->n, H = x->H, i, v, j, lo, len;
    const double *hs;
    dp__transpose_policy(x, p);
    dp__heads_map(&w, p->sel, p->plc, H, x->K, x->shared);
    dp__heads_map(&t, x->wt_sel, x->wt_plc, H, x->K, x->shared);
    dp__gnn_forward(x, &x->gnn[0], w.gnn_sel, t.gnn_sel);
    hs = dp__emb_sel(x);
    /* mean embeddings along the b-level path (reverse topo) and t-level path */
    for (i = n - 1; i >= 0; i--) {
        v = x->g->topo[i];
        for (j = 0; j < H; j++) {
            double nx = x->bnext[v] >= 0 ? x->pb[(size_t)x->bnext[v] * H + j] * x->blen[x->bnext[v]] : 0;
            x->pb[(size_t)v * H + j] = (hs[(size_t)v * H + j] + nx) / x->blen[v];
        }
    }
    for (i = 0; i < n; i++) {
        v = x->g->topo[i];
        for (j = 0; j < H; j++) {
            double pv = x->tprev[v] >= 0 ? x->pt[(size_t)x->tprev[v] * H + j] * x->tlen[x->tprev[v]] : 0;
            x->pt[(size_t)v * H + j] = (hs[(size_t)v * H + j] + pv) / x->tlen[v];
        }
    }
    /* SEL's first layer, then its scores, over the ops a block of rows
       at a time (inference: zsel holds the messages' block of rows;
       training: all n at once) */
    for (lo = 0; lo < n; lo += len) {
        size_t o = (size_t)lo * H;
        len = n - lo < x->gnn[0].mrows ? n - lo : x->gnn[0].mrows;
        for (v = 0; v < len; v++) memcpy(x->zsel + (size_t)v * H, w.s_b1, sizeof(double) * (size_t)H);
        dp__gemm(x->zsel, (size_t)H, x->x + (size_t)lo * DP__F, DP__F, t.s_wx, len, DP__F, H);
        dp__gemm(x->zsel, (size_t)H, hs + o, (size_t)H, t.s_wh, len, H, H);
        dp__gemm(x->zsel, (size_t)H, x->pb + o, (size_t)H, t.s_wpb, len, H, H);
        dp__gemm(x->zsel, (size_t)H, x->pt + o, (size_t)H, t.s_wpt, len, H, H);
        for (v = 0; v < len; v++) {
            const double *z = x->zsel + (size_t)v * H;
            double s = w.s_b2[0];
            for (j = 0; j < H; j++) s += w.s_w2[j] * dp__relu(z[j]);
            x->ssel[lo + v] = s;
        }
    }
    if (x->wsel) {   /* inference: the scores' weights for sampled SEL steps (dp__sel_draw) */
        double mx = -HUGE_VAL;
        for (v = 0; v < n; v++) if (x->ssel[v] > mx) mx = x->ssel[v];
        for (v = 0; v < n; v++) x->wsel[v] = exp(x->ssel[v] - mx);
    }
}

/* PLC's encoder, after SEL's head: in inference its pre-activations and
   messages reuse the scratch in which SEL's head made pb, pt and zsel. */
static void dp__forward_plc_gnn(dp__gctx *x, const dp_policy *p)
{
    dp__heads w, t;
    if (x->shared) return;
    dp__heads_map(&w, p->sel, p->plc, x->H, x->K, x->shared);
    dp__heads_map(&t, x->wt_sel, x->wt_plc, x->H, x->K, x->shared);
    dp__gnn_forward(x, &x->gnn[1], w.gnn_plc, t.gnn_plc);
}

static void dp__forward_plc(dp__gctx *x, const dp_policy *p)
{
    dp__heads w, t;
    int n = x->n, H = x->H, v;
    const double *hp = dp__emb_plc(x);
    dp__heads_map(&w, p->sel, p->plc, H, x->K, x->shared);
    dp__heads_map(&t, x->wt_sel, x->wt_plc, H, x->K, x->shared);
    /* PLC's op-only part and projected embedding */
    for (v = 0; v < n; v++) memcpy(x->A + (size_t)v * H, w.p_b1, sizeof(double) * (size_t)H);
    dp__gemm(x->A, (size_t)H, x->x, DP__F, t.p_wx, n, DP__F, H);
    dp__gemm(x->A, (size_t)H, hp, (size_t)H, t.p_wh, n, H, H);
    memset(x->P, 0, sizeof(double) * (size_t)n * H);
    dp__gemm(x->P, (size_t)H, hp, (size_t)H, t.p_we, n, H, H);
}

static void dp__forward(dp__gctx *x, const dp_policy *p)
{
    dp__forward_sel(x, p);
    dp__forward_plc_gnn(x, p);
    dp__forward_plc(x, p);
}

/* Softmax of logit[0..k) into prob (max-shifted); returns the entropy,
   or 0 without computing it when ent is 0 (inference). */
static double dp__softmax(const double *logit, double *prob, int k, int ent)
{
    double mx = logit[0], s = 0, h = 0;
    int i;
    for (i = 1; i < k; i++) if (logit[i] > mx) mx = logit[i];
    for (i = 0; i < k; i++) { prob[i] = exp(logit[i] - mx); s += prob[i]; }
    for (i = 0; i < k; i++) prob[i] /= s;
    if (ent) for (i = 0; i < k; i++) if (prob[i] > 0) h -= prob[i] * log(prob[i]);
    return h;
}

/* Choice among k options: uniform with probability eps, else sampled from
   prob (sample) or the most probable (ties: the first). */
static int dp__choose(const double *prob, int k, int sample, double eps, dp_rng *rng)
{
    int i, best = 0;
    if (sample) {
        double u;
        if (eps > 0 && dp_rng_uniform(rng) < eps) return dp_rng_int(rng, k);
        u = dp_rng_uniform(rng);
        for (i = 0; i < k - 1; i++) { u -= prob[i]; if (u < 0) return i; }
        return k - 1;
    }
    for (i = 1; i < k; i++) if (prob[i] > prob[best]) best = i;
    return best;
}

/* The probability of the expert's choices among k (at least 1e-300, so
   that its log is finite). */
static double dp__expert_mass(const double *prob, int k, const int *expert)
{
    double pe = 0;
    int i;
    for (i = 0; i < k; i++) if (expert[i]) pe += prob[i];
    return pe < 1e-300 ? 1e-300 : pe;
}

/* Adds the gradient of the step loss w.r.t. the k logits:
   gu += w (p - onehot(a))            (REINFORCE, times the return later)
   gf += beta p (log p + H)           (minus the entropy bonus)
   gf += ilw (p - [expert] p / P(expert))   (imitation, weight ilw: 1 in
                                       stage il, the anchor's weight in
                                       the REINFORCE stages, else 0)
   all times it when prob = softmax(it x logits) (a temperature 1 / it);
   pe = P(expert), dp__expert_mass's. Returns the imitation loss
   -ilw log P(expert). */
static double dp__step_grad(const double *prob, int k, int a, double w, double adv, double beta, double ent,
                            const int *expert, double pe, double ilw, double *gu, double *gf, const int *idx, double it)
{
    double loss = 0;
    int i, il = ilw > 0;
    if (il) loss = -log(pe);
    for (i = 0; i < k; i++) {
        int j = idx ? idx[i] : i;
        double p = prob[i];
        double q = it * w * (p - (i == a));
        gu[j] += q;
        gf[j] += adv * q;
        if (p > 0) gf[j] += it * beta * p * (log(p) + ent);
        if (il) gf[j] += it * ilw * (p - (expert[i] ? p / pe : 0));
    }
    return ilw * loss;
}

typedef struct dp__roll_opts {
    int sample; double eps; int il; int train; double gamma, beta;
    double anchor;                     /* weight of the cp expert's imitation
                                          term when not il (0: none)       */
    double temp;                       /* softmax temperature; 0 -> 1       */
    const double *bstep; double bnorm; /* per-step baseline b_t and the mean
                                          cost b (NULL: none)               */
    const int *force_op, *force_dev;   /* replay these choices (step t: op, device) */
    /* PPO's replay of a stored episode (with force_op, force_dev): old_lp
       [2n] its choices' log-probabilities when it was rolled out (step t:
       SEL's at 2t, PLC's at 2t + 1), adv_t [n] its steps' return
       corrections (in place of bstep), ppo_R its return; each choice's
       REINFORCE term is weighted by r = exp(log p - old) and dropped where
       the clipped surrogate min(r A, clip(r, 1 - ppo_clip, 1 + ppo_clip) A)
       is flat (A = ppo_R + the step's correction) */
    const double *old_lp, *adv_t; double ppo_R, ppo_clip;
    double stop_above;                 /* > 0: stop (st->stopped) once the
                                          placement's bound (dp__place_bound)
                                          passes it: inference's samples */
    const double *critic;              /* [DP__CF] the critic's weights: b_t =
                                          scale (w . s_t) with bnorm (in place
                                          of bstep)                         */
    int improve; double tau;           /* Placeto's one-step improvement
                                          (dp_train_opts.placeto_reinforce 0)
                                          and its target's temperature      */
} dp__roll_opts;

/* ---- the critic (dp_train_opts.critic) ----------------------------------
   A linear value function V(s_t) = w . s_t of the partial schedule's state
   before step t, predicting the cost still to come, (cost - phi_t) over
   the lower bound; every feature is in lower-bound units, so one critic
   serves graphs and device counts alike:
     s_t = [1, t / n, phi_t, the unplaced ops' work / devices, the largest
            b-level among the legal ops, phi_t - the earliest device free
            time, the devices' mean free time]  (times over the lower bound)
   Its loss per episode: mean over the steps of (V(s_t) - y_t)^2 / 2. */
static void dp__critic_state(const dp__gctx *x, int t, double phi, double *s)
{
    double amin = HUGE_VAL, asum = 0, blmax = 0, sc = x->scale;
    int d, i;
    for (d = 0; d < x->nd; d++) { asum += x->avail[d]; if (x->avail[d] < amin) amin = x->avail[d]; }
    for (i = 0; i < x->nlegal; i++) if (x->bl[x->legal[i]] > blmax) blmax = x->bl[x->legal[i]];
    s[0] = 1; s[1] = (double)t / x->n; s[2] = phi / sc; s[3] = x->crem / (x->nd * sc);
    s[4] = blmax / sc; s[5] = (phi - amin) / sc; s[6] = asum / (x->nd * sc);
}

static double dp__critic_value(const double *w, const double *s)
{
    double v = 0;
    int i;
    for (i = 0; i < DP__CF; i++) v += w[i] * s[i];
    return v;
}

/* The last rollout's critic loss for its cost, and its gradient times
   scale into g (accumulated). */
static double dp__critic_grad(const dp__gctx *x, const double *w, double cost, double scale, double *g)
{
    double loss = 0;
    int t, i;
    for (t = 0; t < x->n; t++) {
        const double *s = x->step_cs + (size_t)t * DP__CF;
        double r = dp__critic_value(w, s) - (cost - x->phi[t]) / x->scale;
        loss += 0.5 * r * r / x->n;
        for (i = 0; i < DP__CF; i++) g[i] += scale * r * s[i] / x->n;
    }
    return loss;
}

/* logp: sum of the choices' log-probabilities; wlogp: the same discounted;
   alogp: the same discounted and times each step's baseline correction;
   sel_ent, plc_ent: the two policies' entropies summed over the steps;
   xent: -log P(cp expert's choices) summed over both choices of every
   step (training rollouts only);
   par of npar: PLC choices that joined an input's device, of the steps
   whose op has inputs; ppo_obj: a PPO replay's clipped surrogate, summed
   over the choices (discounted), clipped of nchoice: its choices whose
   term was clipped. An inference rollout (ro->train 0) makes the same
   choices but leaves every statistic 0 (no logs, no entropies). */
typedef struct dp__roll_stats { double il_loss, entropy, logp, wlogp, alogp, sel_ent, plc_ent, xent, ppo_obj; int par, npar, clipped, nchoice, stopped; } dp__roll_stats;

/* PPO's weight of a choice's REINFORCE term: its probability ratio r, or
   0 where the dual-clipped surrogate (Ye et al. 2020)
       A >= 0: min(r A, clip(r, 1 - c, 1 + c) A)
       A <  0: max(min(r A, clip(r, 1 - c, 1 + c) A), DP__PPO_DUAL A)
   does not depend on r (A > 0 and r > 1 + c; A < 0 and r < 1 - c or
   r > DP__PPO_DUAL). The second clip bounds a negative return's push:
   without it a choice whose probability grew from near 0 has a ratio of
   up to e^690, and its gradient overflows (PPO diverged so on chain_mm).
   The surrogate's value into st->ppo_obj (times w), the clip into st. */
#define DP__PPO_DUAL 3.0
static double dp__ppo_weight(double l, double old, double A, double c, double w, dp__roll_stats *st)
{
    double d = l - old, r, rc, obj;
    st->nchoice++;
    if (A <= 0 && d > log(DP__PPO_DUAL)) {  /* r > dual: flat at dual A */
        st->ppo_obj += w * DP__PPO_DUAL * A;
        st->clipped++;
        return 0;
    }
    r = exp(d);
    rc = r < 1 - c ? 1 - c : r > 1 + c ? 1 + c : r;
    obj = r * A < rc * A ? r * A : rc * A;
    st->ppo_obj += w * obj;
    if ((A > 0 && r > 1 + c) || (A < 0 && r < 1 - c)) { st->clipped++; return 0; }
    return r;
}

/* The latest arrival r1 (from device *d1) and the latest from any other
   device r2 (r2 <= r1), with arr arriving from device a:
       a == d1:        r1 = max(r1, arr)
       arr > r1:       r2 = r1, r1 = arr, d1 = a
       else:           r2 = max(r2, arr)
   written as maxima and selects (the same values), which the compilers
   turn into fewer branches: which way it goes is a coin toss per input on
   a wide graph. */
static void dp__top2(double *r1, double *r2, int *d1, double arr, int a)
{
    double o1 = *r1, o2 = *r2;
    int same = a == *d1, gt = arr > o1;
    double lo = arr < o1 ? arr : o1;   /* the smaller of arr and r1 */
    *r2 = same ? o2 : lo > o2 ? lo : o2;
    *d1 = ((same ^ 1) & gt) ? a : *d1;
    *r1 = gt ? arr : o1;
}

/* Edge e's transfer time between any two devices, where all links are
   alike (x->alike): dp_xfer_time's, bit for bit. */
static double dp__xe(const dp__gctx *x, int e)
{
    return x->xlat + x->g->bytes[e] / x->xbw;
}

/* Op v's inputs as seen from each device d, into f's row d: fd[1] the work
   of v's parents on d, fd[2] and fd[3] their first and last end (0 and 0
   without one), and in x->est[d] the last input's arrival on d (0 for a
   source). Every (input, device) pair in turn: a transfer's time depends
   on both ends. */
static void dp__plc_inputs(dp__gctx *x, int v, double *f)
{
    const dp_graph *g = x->g;
    int nd = x->nd, d, k;
    for (d = 0; d < nd; d++) {
        double inw = 0, e0 = HUGE_VAL, e1 = 0, ready = 0, *fd = f + (size_t)d * DP__DF;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k], u = g->src[e];
            double arr = x->end[u] + dp_xfer_time(x->c, g->bytes[e], x->assign[u], d);
            if (arr > ready) ready = arr;
            if (x->assign[u] == d) {
                inw += dp__otime(x->optime, x->otw, u, d);
                if (x->end[u] < e0) e0 = x->end[u];
                if (x->end[u] > e1) e1 = x->end[u];
            }
        }
        fd[1] = inw; fd[2] = e0 == HUGE_VAL ? 0 : e0; fd[3] = e1;
        x->est[d] = ready;
    }
}

/* dp__plc_inputs where every link is alike (x->alike: an edge's transfer
   time between any two devices), in one pass over the inputs instead of
   one per device: an input arrives on its own device at its end, on any
   other at its end + xe. So the last arrival on d is the later of d's
   last input end and the latest remote arrival from a device other than
   d: the latest of all (r1, from device d1), or for d1 itself the latest
   from any other device (r2), found from each device's latest arrival
   after the pass (the pass itself all sums, minima and maxima: no branch
   on data). The same values, bit for bit (each device's sums in the same
   order). In inference the same pass keeps, per device, the longest path
   to an input there (x->pin) and the same plus its transfer (x->pinx),
   from which dp__place_step makes v's longest path on the device chosen
   without another pass over the inputs. */
static void dp__plc_inputs_alike(dp__gctx *x, int v, double *f)
{
    const dp_graph *g = x->g;
    const double *pathe = x->pathe;
    double r1 = 0, r2 = 0, *pin = x->pin, *pinx = x->pinx;
    int nd = x->nd, d, d1 = -1, k;
    /* fd[4], free until dp__plc_features sets it: the latest arrival of
       an input from device d */
    for (d = 0; d < nd; d++) { double *fd = f + (size_t)d * DP__DF; fd[1] = 0; fd[2] = HUGE_VAL; fd[3] = 0; fd[4] = 0; }
    if (pathe) for (d = 0; d < nd; d++) pin[d] = pinx[d] = 0;
    for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
        int u = x->isrc[k], a = x->assign[u];
        double eu = x->end[u], xe = dp__xe(x, g->in_edge[k]), arr = eu + xe, *fa = f + (size_t)a * DP__DF;
        DP__PREFETCH(&g->bytes[g->in_edge[k + DP__AHEAD < g->in_off[v + 1] ? k + DP__AHEAD : k]]);
        fa[1] += dp__otime(x->optime, x->otw, u, a);
        fa[2] = eu < fa[2] ? eu : fa[2];
        fa[3] = eu > fa[3] ? eu : fa[3];
        fa[4] = arr > fa[4] ? arr : fa[4];
        if (pathe) {
            double pu = pathe[u], px = pu + xe;
            pin[a] = pu > pin[a] ? pu : pin[a];
            pinx[a] = px > pinx[a] ? px : pinx[a];
        }
    }
    /* r1 the latest arrival of all, from device d1, r2 the latest from
       any other device (d1: the first device that has r1; where several
       have it, r2 = r1 and which one is d1 changes nothing) */
    for (d = 0; d < nd; d++) dp__top2(&r1, &r2, &d1, f[(size_t)d * DP__DF + 4], d);
    for (d = 0; d < nd; d++) {
        double *fd = f + (size_t)d * DP__DF, remote = d == d1 ? r2 : r1;
        if (fd[2] == HUGE_VAL) fd[2] = 0;
        x->est[d] = fd[3] > remote ? fd[3] : remote;
    }
}

/* With insertion: the earliest start at or after ready of an op taking w
   on device d, in the first idle gap of d long enough for it (HEFT's
   insertion policy), else after d's last op. The busy blocks are sorted
   and disjoint, so their ends are sorted too: a binary search finds the
   first that ends after ready, and the scan goes on from there (an op
   taking no time starts at ready or at the end of the block holding it). */
static double dp__gap_start(const dp__gctx *x, int d, double ready, double w)
{
    const double *S = x->busy + 2 * (size_t)d, *E = S + 1;   /* block q: S[q sd], E[q sd] */
    size_t sd = 2 * (size_t)x->nd;
    int lo = 0, hi = x->busy_n[d], q;
    double t;
    while (lo < hi) {                    /* the first interval ending after ready */
        int mid = (lo + hi) / 2;
        if (E[(size_t)mid * sd] <= ready) lo = mid + 1; else hi = mid;
    }
    t = ready;
    for (q = lo; q < x->busy_n[d]; q++) {
        if (t + w <= S[(size_t)q * sd]) return t;   /* fits before interval q */
        if (E[(size_t)q * sd] > t) t = E[(size_t)q * sd];
    }
    return t;
}

/* PLC's lookahead (the last two device features) into x->la, returning
   the least: with v on device d (finishing at est[d] + its time there),
   the time by which all of v's successors could start, each y at the
   least over devices q of the latest arrival on q of v's output and of
   y's inputs placed so far (v's finish where it has no successors).
   Where every link is alike (x->alike) the latest arrival on q is the later
   of q's own latest input end and the latest remote arrival from another
   device (r1 from d1, else r2), kept per op as its inputs are placed
   (dp__place_step); and the least over q != d of max(v's remote arrival,
   R[q]) is max(that arrival, the least R[q] over q != d): the same
   values, bit for bit, in O(devices) per successor. */
static double dp__plc_lookahead(dp__gctx *x, int v)
{
    const dp_graph *g = x->g;
    int nd = x->nd, d, q, k, j;
    double *la = x->la, *R = x->lar, *A = x->lam, lmin = HUGE_VAL, amin = HUGE_VAL;
    for (d = 0; d < nd; d++) {
        la[d] = A[d] = x->est[d] + dp__otime(x->optime, x->otw, v, d);
        if (A[d] < amin) amin = A[d];
    }
    lmin = amin;   /* the least la[d] so far (la starts at A) */
    for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
        int y = x->odst[k];
        double xv = 0;
        DP__PREFETCH(&g->bytes[g->out_edge[k + DP__AHEAD < g->out_off[v + 1] ? k + DP__AHEAD : k]]);
        if (x->alike) {
            /* y's placed inputs, kept by dp__place_step (v is not placed).
               r1 >= every input's end, so the latest arrival is r1 on
               every device but d1, and at most r1 there (rd1); the least
               over q != d is then rd1, or r1 for d1 itself. Every
               device's value is at most max(A[d], r1) (rd1 <= r1), so
               a successor whose r1 is at most every la[d] so far (lmin)
               changes none: skipped (all in by v's earliest finish, or
               none placed, is the case r1 <= amin). */
            const dp__inputs *iy = &x->inr[y];
            double r1 = iy->r1, rd1;
            int d1 = iy->d1;
            /* v's transfer time to each successor, kept for dp__place_step */
            x->xout[k - g->out_off[v]] = xv = dp__xe(x, g->out_edge[k]);
            if (r1 <= lmin) continue;   /* none placed as well: r1 0, lmin >= 0 */
            rd1 = iy->own > iy->r2 ? iy->own : iy->r2;
            /* every device as one that is not d1 (no select per device),
               then d1's own value over what la[d1] was before (r1 > 0:
               some input has arrived, so d1 is a device) */
            {
                double keep = la[d1], b1 = A[d1] > rd1 ? A[d1] : rd1, o1 = A[d1] + xv;
                for (d = 0; d < nd; d++) {
                    double b = A[d] > r1 ? A[d] : r1, o = A[d] + xv;
                    o = rd1 > o ? rd1 : o;
                    b = o < b ? o : b;
                    la[d] = b > la[d] ? b : la[d];
                }
                o1 = r1 > o1 ? r1 : o1;
                b1 = o1 < b1 ? o1 : b1;
                la[d1] = b1 > keep ? b1 : keep;
                for (lmin = la[0], d = 1; d < nd; d++) lmin = la[d] < lmin ? la[d] : lmin;
            }
        } else {
            if (x->pend[y] == g->in_off[y + 1] - g->in_off[y]) continue;   /* none placed: y could start at v's finish */
            for (q = 0; q < nd; q++) {
                R[q] = 0;
                for (j = g->in_off[y]; j < g->in_off[y + 1]; j++) {
                    int e3 = g->in_edge[j], u = g->src[e3];
                    double arr;
                    if (u == v || x->assign[u] < 0) continue;
                    arr = x->end[u] + dp_xfer_time(x->c, g->bytes[e3], x->assign[u], q);
                    if (arr > R[q]) R[q] = arr;
                }
            }
            for (d = 0; d < nd; d++) {
                double b = HUGE_VAL;
                for (q = 0; q < nd; q++) {
                    double o = A[d] + dp_xfer_time(x->c, g->bytes[g->out_edge[k]], d, q);
                    if (R[q] > o) o = R[q];
                    if (o < b) b = o;
                }
                if (b > la[d]) la[d] = b;
            }
        }
    }
    for (lmin = HUGE_VAL, d = 0; d < nd; d++) if (la[d] < lmin) lmin = la[d];
    return lmin;
}

/* PLC's inputs for placing op v: each device's features from the partial
   schedule into f (work, input work, first and last input's end, earliest
   start, its distance to the earliest, earliest or not) and the device's
   embedding into zs (v's, plus the mean of the device's ops' projections);
   returns the earliest start over the devices. */
static double dp__plc_features(dp__gctx *x, int v, double *f, double *zs)
{
    int nd = x->nd, H = x->H, d;
    double emin = HUGE_VAL, lmin;
    if (x->alike) dp__plc_inputs_alike(x, v, f);
    else dp__plc_inputs(x, v, f);
    for (d = 0; d < nd; d++) {
        double *fd = f + (size_t)d * DP__DF;
        if (x->insertion) x->est[d] = dp__gap_start(x, d, x->est[d], dp__otime(x->optime, x->otw, v, d));
        else if (x->avail[d] > x->est[d]) x->est[d] = x->avail[d];
        if (x->est[d] < emin) emin = x->est[d];
        fd[0] = x->work[d] * x->iscale; fd[1] = fd[1] * x->iscale;
        fd[2] = fd[2] * x->iscale; fd[3] = fd[3] * x->iscale; fd[4] = x->est[d] * x->iscale;
    }
    lmin = dp__plc_lookahead(x, v);
    for (d = 0; d < nd; d++) {
        double *fd = f + (size_t)d * DP__DF, *z = zs + (size_t)d * H;
        const double *A = x->A + (size_t)v * H, *pm = x->pmean + (size_t)d * H;
        fd[5] = (x->est[d] - emin) * x->iunit;
        fd[6] = x->est[d] <= emin + 1e-9 * fabs(emin);
        fd[7] = (x->la[d] - lmin) * x->iunit;
        fd[8] = x->la[d] <= lmin + 1e-9 * fabs(lmin);
        if (x->cnt[d] > 0) {
            dp__vadd(z, A, pm, H);
        } else {
            memcpy(z, A, sizeof(double) * (size_t)H);
        }
    }
    return emin;
}

/* PLC's output layer: logit[d] = b2 + sum_i w2[i] relu(z[d][i]), each sum
   in the order of i; four devices side by side, so that their chains of
   additions overlap instead of running one after another. */
static void dp__plc_logits(const double *z, const double *w2, double b2, int nd, int H, double *logit)
{
    int d = 0, i;
    for (; d + 4 <= nd; d += 4) {
        const double *z0 = z + (size_t)d * H, *z1 = z0 + H, *z2 = z1 + H, *z3 = z2 + H;
        double s0 = b2, s1 = b2, s2 = b2, s3 = b2;
        for (i = 0; i < H; i++) {
            s0 += w2[i] * dp__relu(z0[i]); s1 += w2[i] * dp__relu(z1[i]);
            s2 += w2[i] * dp__relu(z2[i]); s3 += w2[i] * dp__relu(z3[i]);
        }
        logit[d] = s0; logit[d + 1] = s1; logit[d + 2] = s2; logit[d + 3] = s3;
    }
    for (; d < nd; d++) {
        const double *z0 = z + (size_t)d * H;
        double s0 = b2;
        for (i = 0; i < H; i++) s0 += w2[i] * dp__relu(z0[i]);
        logit[d] = s0;
    }
}

/* The legal set (ops whose inputs are all placed): an array, legal[pos[v]]
   = v, an op added at the end and one removed by moving the last into
   its place; in a sampled rollout of a large graph (stree_on) each
   position's weight wsel in the sum tree, in a greedy one (selq_live) the
   op in the heap by score. */
static void dp__stree_set(dp__gctx *x, int i, double w)
{
    size_t j = (size_t)x->stn + (size_t)i;
    x->stree[j] = w;
    for (j /= 2; j >= 1; j /= 2) x->stree[j] = x->stree[2 * j] + x->stree[2 * j + 1];
}

/* The tree kept only while it is used: a sampled rollout draws from it
   only while the legal set has more than DP__SEL_TREE ops, so it is made
   to mirror the legal array at such a draw and kept from then on, until
   the set falls below a quarter of that (on a chain the set is one op,
   and keeping the tree was a fifth of the rollout). Made again: leaves
   [0, nlegal) from wsel and [nlegal, stree_hi) zero, then the sums above
   them, level by level. Every node is the sum of its two children in
   either way, so the tree holds the same values as one kept all along,
   and the draws are the same. */
static void dp__stree_sync(dp__gctx *x)
{
    size_t nl = (size_t)x->stn, a = nl, b, i, j;
    size_t hi = (size_t)(x->stree_hi > x->nlegal ? x->stree_hi : x->nlegal);
    for (i = 0; i < (size_t)x->nlegal; i++) x->stree[nl + i] = x->wsel[x->legal[i]];
    for (; i < hi; i++) x->stree[nl + i] = 0;
    for (b = nl + hi; a > 1;) {          /* the parents of [a, b) */
        a /= 2; b = (b + 1) / 2;
        for (j = a; j < b; j++) x->stree[j] = x->stree[2 * j] + x->stree[2 * j + 1];
    }
    x->stree_hi = x->nlegal;
    x->stree_live = 1;
}

static void dp__legal_add(dp__gctx *x, int v)
{
    x->pos[v] = x->nlegal;
    x->legal[x->nlegal++] = v;
    if (x->stree_live) {
        dp__stree_set(x, x->nlegal - 1, x->wsel[v]);
        if (x->nlegal > x->stree_hi) x->stree_hi = x->nlegal;
    }
    if (x->selq_live) dp__oh_push(&x->selq, v);
}

/* The greedy steps' heap made from the legal set, and kept from then on
   (selq_live): it is used only on a legal set of more than DP__SEL_TREE
   ops, and on a chain, kept all along, it held every op (each placed op
   stays until it surfaces). The heap's order is total (score, then
   index), so its top legal op is the same whatever else it holds, and the
   greedy steps the same as with a heap kept all along. */
static void dp__selq_sync(dp__gctx *x)
{
    int i;
    x->selq.n = 0;
    for (i = 0; i < x->nlegal; i++) dp__oh_push(&x->selq, x->legal[i]);
    x->selq_live = 1;
}

static void dp__legal_remove(dp__gctx *x, int i)
{
    x->legal[i] = x->legal[--x->nlegal];
    x->pos[x->legal[i]] = i;
    if (x->stree_live) {
        if (i < x->nlegal) dp__stree_set(x, i, x->wsel[x->legal[i]]);
        dp__stree_set(x, x->nlegal, 0);
        x->stree_hi = x->nlegal;
        if (x->nlegal < DP__SEL_TREE / 4) x->stree_live = 0;   /* left as it is: stale from here */
    }
}

/* Places v on device a at step t: its start and end, the device's load and
   mean projection, and v's successors that become legal. */
static void dp__place_step(dp__gctx *x, int t, int v, int a)
{
    const dp_graph *g = x->g;
    int nd = x->nd, H = x->H, k;
    if (x->train) { x->step_op[t] = v; x->step_dev[t] = a; }
    x->assign[v] = a;
    x->order[t] = v;
    x->end[v] = x->est[a] + dp__otime(x->optime, x->otw, v, a);
    if (x->pathe && x->alike) {
        /* inference: the sample bound's longest path, from the longest
           to an input on each device that dp__plc_inputs_alike kept: an
           input on a adds no transfer, one elsewhere its own (the same
           maxima as over the inputs, in any order) */
        double r = x->pin[a];
        for (k = 0; k < nd; k++) r = k != a && x->pinx[k] > r ? x->pinx[k] : r;
        x->pathe[v] = r + dp__otime(x->optime, x->otw, v, a);
        if (x->pathe[v] > x->pathmax) x->pathmax = x->pathe[v];
    } else if (x->pathe) {
        double r = 0;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int u = x->isrc[k], b = x->assign[u];
            double xe = b == a ? 0 : dp_xfer_time(x->c, g->bytes[g->in_edge[k]], b, a);
            double arr = x->pathe[u] + xe;
            r = arr > r ? arr : r;
        }
        x->pathe[v] = r + dp__otime(x->optime, x->otw, v, a);
        if (x->pathe[v] > x->pathmax) x->pathmax = x->pathe[v];
    }
    if (x->insertion) {
        /* into a's busy blocks, by start: v joins a block it touches (one
           before ending at its start, one after starting at its end), so
           that the blocks are the device's busy spans and a scan for a gap
           (dp__gap_start) meets one block per gap, not one per op */
        double *S = x->busy + 2 * (size_t)a, *E = S + 1, st = x->est[a], en = x->end[v];   /* block q: S[q sd], E[q sd] */
        size_t sd = 2 * (size_t)nd;
        int nb = x->busy_n[a], lo = 0, hi = nb, q;
        while (lo < hi) {                /* the first block starting after st */
            int mid = (lo + hi) / 2;
            if (S[(size_t)mid * sd] <= st) lo = mid + 1; else hi = mid;
        }
        if (lo > 0 && E[(size_t)(lo - 1) * sd] == st) {
            E[(size_t)(lo - 1) * sd] = en;
            if (lo < nb && S[(size_t)lo * sd] == en) {   /* v closed the gap: two blocks become one */
                E[(size_t)(lo - 1) * sd] = E[(size_t)lo * sd];
                for (q = lo; q < nb - 1; q++) { S[(size_t)q * sd] = S[(size_t)(q + 1) * sd]; E[(size_t)q * sd] = E[(size_t)(q + 1) * sd]; }
                x->busy_n[a]--;
            }
        } else if (lo < nb && S[(size_t)lo * sd] == en) {
            S[(size_t)lo * sd] = st;
        } else {
            for (q = nb; q > lo; q--) { S[(size_t)q * sd] = S[(size_t)(q - 1) * sd]; E[(size_t)q * sd] = E[(size_t)(q - 1) * sd]; }
            S[(size_t)lo * sd] = st; E[(size_t)lo * sd] = en;
            x->busy_n[a]++;
        }
    }
    if (x->end[v] > x->avail[a]) x->avail[a] = x->end[v];   /* without insertion v starts at or after avail */
    x->work[a] += dp__otime(x->optime, x->otw, v, a);
    dp__vadd(x->psum + (size_t)a * H, x->psum + (size_t)a * H, x->P + (size_t)v * H, H);
    x->cnt[a] += 1;
    /* the mean of a's ops' projections, which only this step changes */
    dp__vdiv(x->pmean + (size_t)a * H, x->psum + (size_t)a * H, x->cnt[a], H);
    for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
        int y = x->odst[k];
        if (--x->pend[y] == 0) dp__legal_add(x, y);
        if (x->alike) {
            /* y's placed inputs, for the lookahead: the latest arrival r1
               (from device d1), the latest from elsewhere r2, and the
               latest end on d1, of which the lookahead reads only its
               maximum with r2. When v moves r1 to its own device a, every
               earlier input on a arrived by the old r1, now r2, and ended
               before it arrived: from then on d1's latest end is v's as
               far as that maximum goes (the same values as a latest end
               kept for every device, in n doubles instead of n devices) */
            double ev = x->end[v], arr = ev + x->xout[k - g->out_off[v]];   /* dp__plc_lookahead's */
            dp__inputs *iy = &x->inr[y];
            int d1 = iy->d1;
            dp__top2(&iy->r1, &iy->r2, &iy->d1, arr, a);
            if (a == d1) iy->own = ev > iy->own ? ev : iy->own;
            else if (iy->d1 == a) iy->own = ev;
        }
    }
}

/* An inference rollout's sampled SEL step: the legal op drawn with
   probability proportional to wsel (exp(score - the largest score),
   made once per placement), which is the softmax of the scores over the
   legal set without an exp per legal op and step. Returns its index in
   the legal set, or -1 where it cannot stand in for the softmax: no
   wsel, a temperature, exploration, or the legal set's weights all
   underflowing. */
static int dp__sel_draw(dp__gctx *x, double it, double eps, dp_rng *rng)
{
    double W = 0, u;
    int i, k = x->nlegal;
    if (!x->wsel || it != 1 || eps > 0) return -1;
    if (x->stree_on && k > DP__SEL_TREE) {
        /* a large legal set: down the sum tree, the same distribution in
           O(log n) (the sums' rounding differs from the scan's: a draw
           within an ulp of a boundary may pick the neighbour) */
        size_t j = 1, nl = (size_t)x->stn;
        if (!x->stree_live) dp__stree_sync(x);
        if (!((W = x->stree[1]) > 1e-250)) return -1;
        u = dp_rng_uniform(rng) * W;
        while (j < nl) {
            if (u < x->stree[2 * j]) j = 2 * j;
            else { u -= x->stree[2 * j]; j = 2 * j + 1; }
        }
        i = (int)(j - nl);
        return i < k ? i : k - 1;
    }
    for (i = 0; i < k; i++) W += x->wsel[x->legal[i]];
    if (!(W > 1e-250)) return -1;
    u = dp_rng_uniform(rng) * W;
    for (i = 0; i < k - 1; i++) { u -= x->wsel[x->legal[i]]; if (u < 0) return i; }
    return k - 1;
}

/* Step t's SEL choice from the softmax of the scores (times it) over the
   legal set, left in x->prob, with the cp expert's choices (the largest
   b-level) in x->expert when training; *ent gets the softmax's entropy
   when training. Returns the choice's index in the legal set: replayed
   (force_op), sampled, or the most probable (ties: the lower op index). */
static int dp__sel_choose(dp__gctx *x, const dp__roll_opts *ro, int t, double it, dp_rng *rng, double *ent)
{
    double *lp = x->prob, bmax = -HUGE_VAL;
    int i, li;
    for (i = 0; i < x->nlegal; i++) lp[i] = x->ssel[x->legal[i]] * it;
    *ent = dp__softmax(lp, lp, x->nlegal, ro->train);
    if (x->train && (ro->il || ro->train)) {   /* (inference keeps PLC's experts only) */
        for (i = 0; i < x->nlegal; i++) if (x->bl[x->legal[i]] > bmax) bmax = x->bl[x->legal[i]];
        for (i = 0; i < x->nlegal; i++) x->expert[i] = x->bl[x->legal[i]] >= bmax - 1e-9 * fabs(bmax);
    }
    if (ro->force_op) return x->pos[ro->force_op[t]];
    li = dp__choose(lp, x->nlegal, ro->sample, ro->eps, rng);
    if (!ro->sample)   /* greedy: ties to the lower op index */
        for (i = 0; i < x->nlegal; i++)
            if (lp[i] == lp[li] && x->legal[i] < x->legal[li]) li = i;
    return li;
}

/* A training rollout's records of one choice, step t's SEL choice (j 0)
   or PLC's (j 1) among k with probabilities prob: its log-probability
   (kept for PPO's replays), its entropy, the cp expert's mass (into *pe)
   and the log-probability sums, w its discount. Returns its REINFORCE
   weight: w, times PPO's ratio in a replay (dp__ppo_weight). */
static double dp__choice_record(dp__gctx *x, const dp__roll_opts *ro, dp__roll_stats *st, int t, int j,
                                const double *prob, int k, int choice, double ent, double w, double adv, double *pe)
{
    double l = log(prob[choice] > 1e-300 ? prob[choice] : 1e-300), wc = w;
    if (x->train) x->step_lp[2 * t + j] = l;
    if (ro->old_lp) wc *= dp__ppo_weight(l, ro->old_lp[2 * t + j], ro->ppo_R + adv, ro->ppo_clip, w, st);
    st->entropy += ent;
    if (j) st->plc_ent += ent;
    else st->sel_ent += ent;
    *pe = dp__expert_mass(prob, k, x->expert);
    st->xent -= log(*pe);
    st->logp += l;
    st->wlogp += w * l;
    st->alogp += adv * w * l;
    return wc;
}

/* A memory dead end at op v (it fits on no device; every device is then
   limited): the device with the most room takes it and the rollout is
   over-full (dp__cost penalises it); the first dead end's op and each
   device's bytes then are kept for the error message. Returns the device. */
static int dp__dead_end(dp__gctx *x, int v)
{
    const dp_cluster *c = x->c;
    int d, room = 0;
    for (d = 1; d < x->nd; d++) if (c->memory[d] - x->mem.used[d] > c->memory[room] - x->mem.used[room]) room = d;
    if (!x->overfull) { x->deadend = v; memcpy(x->mdead, x->mem.used, sizeof(double) * (size_t)x->nd); }
    x->overfull = 1;
    return room;
}

/* PLC's memory mask for op v (a cluster with limits): the devices where
   v still fits (x->mfit) keep their logits, the others get -inf, so the
   softmax, its gradient and its entropy are over the devices it fits; the
   cp expert's choices become the earliest start among those (cp's rule
   within memory). Where it fits nowhere (a dead end: earlier choices
   filled the devices), the device with the most room is the only one,
   and the rollout is over-full (x->overfull; dp__cost penalises it). */
static void dp__plc_mask(dp__gctx *x, int v)
{
    int d, nd = x->nd, nf = 0;
    double emin = HUGE_VAL;
    for (d = 0; d < nd; d++) {
        x->mfit[d] = (char)dp__mem_fits(&x->mem, x->assign, v, d);
        nf += x->mfit[d];
        if (x->mfit[d] && x->est[d] < emin) emin = x->est[d];
    }
    if (nf == 0) {
        int room = dp__dead_end(x, v);
        x->mfit[room] = 1;
        emin = x->est[room];
    }
    for (d = 0; d < nd; d++) {
        if (!x->mfit[d]) x->logit[d] = -HUGE_VAL;
        x->expert[d] = x->mfit[d] && x->est[d] <= emin + 1e-9 * fabs(emin);
    }
}

static void dp__rollout(dp__gctx *x, const dp_policy *p, const dp__roll_opts *ro, dp_rng *rng, dp__roll_stats *st)
{
    const dp_graph *g = x->g;
    dp__heads w;
    int n = x->n, nd = x->nd, H = x->H, t, k, d, v;
    double *lp = x->prob;   /* probabilities over the legal set, then over devices */
    double it = ro->temp > 0 ? 1 / ro->temp : 1;   /* logits times it; gradients too */
    double ilw = ro->il ? 1 : ro->anchor;          /* imitation's weight */
    int tr = ro->train;     /* 0: inference, no statistics (st stays 0) */
    const double *wt_d;     /* Wd^T, made by dp__forward */
    dp__heads_map(&w, p->sel, p->plc, H, x->K, x->shared);
    {
        dp__heads t0;
        dp__heads_map(&t0, x->wt_sel, x->wt_plc, H, x->K, x->shared);
        wt_d = t0.p_wd;
    }
    memset(st, 0, sizeof *st);
    x->nlegal = 0;
    x->stree_on = x->stree && !tr && ro->sample && !ro->force_op;
    x->selq_on = x->selq.h && !tr && !ro->sample && !ro->force_op && it > 0;
    x->stree_live = 0;   /* made at the first draw that needs it (dp__stree_sync) */
    x->selq_live = 0;   /* made at the first greedy step that needs it (dp__selq_sync) */
    if (x->selq_on) { x->selq.n = 0; x->selq.key = x->ssel; }
    for (v = 0; v < n; v++) {
        x->pend[v] = g->in_off[v + 1] - g->in_off[v];
        x->assign[v] = -1;
        if (!x->pend[v]) dp__legal_add(x, v);
    }
    x->insertion = p->opts.insertion;
    x->pathmax = 0;
    if (x->alike) {
        for (v = 0; v < n; v++) { x->inr[v].r1 = x->inr[v].r2 = x->inr[v].own = 0; x->inr[v].d1 = -1; x->inr[v].pad = 0; }
    }
    for (d = 0; d < nd; d++) { x->avail[d] = 0; x->work[d] = 0; x->cnt[d] = 0; x->busy_n[d] = 0; }
    memset(x->psum, 0, sizeof(double) * (size_t)nd * H);
    x->crem = x->wtot;
    x->overfull = 0; x->deadend = -1;
    if (x->mlim) {
        memset(x->mem.used, 0, sizeof(double) * (size_t)nd);
        memset(x->mem.held, 0, sizeof(uint64_t) * dp__mem_words(g));
    }
    if (ro->train) {
        memset(x->gsel_pg, 0, sizeof(double) * (size_t)n);
        memset(x->gsel_fix, 0, sizeof(double) * (size_t)n);
        memset(x->step_gu, 0, sizeof(double) * (size_t)n * nd);
        memset(x->step_gf, 0, sizeof(double) * (size_t)n * nd);
    }
    for (t = 0; t < n; t++) {
        double wdisc = tr ? pow(ro->gamma, (double)(n - 1 - t)) : 1, ent = 0, emin = HUGE_VAL;
        double wc;              /* a choice's REINFORCE weight (PPO: times its ratio) */
        double pe = 1;          /* P(the cp expert's choice), training only */
        size_t ts = x->train ? (size_t)t : 0;   /* inference keeps one step */
        double phi = 0, adv = 0;
        double *f = x->step_f + ts * nd * DP__DF, *zs = x->step_z + ts * nd * H;
        int li, a;
        /* the partial schedule's makespan before this step, and the step's
           return correction (b_t + phi_t - b) / b (added to the episode's
           (b - cost) / b, it gives (b_t - (cost - phi_t)) / b) */
        for (d = 0; d < nd; d++) if (x->avail[d] > phi) phi = x->avail[d];
        if (x->train) x->phi[t] = phi;
        if (ro->critic) dp__critic_state(x, t, phi, x->step_cs + ts * DP__CF);
        if (ro->adv_t) adv = ro->adv_t[t];
        else if (ro->critic && ro->bnorm > 0)
            adv = (x->scale * dp__critic_value(ro->critic, x->step_cs + ts * DP__CF) + phi - ro->bnorm) / ro->bnorm;
        else if (ro->bstep && ro->bnorm > 0) adv = (ro->bstep[t] + phi - ro->bnorm) / ro->bnorm;
        if (x->train) x->step_adv[t] = adv;
        /* ---- SEL: softmax of the static scores over the legal set ---- */
        li = !tr && ro->sample && !ro->force_op ? dp__sel_draw(x, it, ro->eps, rng) : -1;
        if (li < 0 && x->selq_on && x->nlegal > DP__SEL_TREE) {
            /* greedy on a large legal set: the highest score (the
               softmax's argmax) from the heap, past ops already placed */
            if (!x->selq_live) dp__selq_sync(x);
            while (x->assign[x->selq.h[0]] >= 0) dp__oh_pop(&x->selq);
            li = x->pos[dp__oh_pop(&x->selq)];
        } else if (x->selq_live && x->nlegal < DP__SEL_TREE / 4) x->selq_live = 0;   /* made again when needed */
        if (li < 0) li = dp__sel_choose(x, ro, t, it, rng, &ent);
        v = x->legal[li];
        wc = tr ? dp__choice_record(x, ro, st, t, 0, lp, x->nlegal, li, ent, wdisc, adv, &pe) : wdisc;
        if (ro->train) st->il_loss += dp__step_grad(lp, x->nlegal, li, wc, adv, ro->beta, ent, x->expert, pe, ilw, x->gsel_pg, x->gsel_fix, x->legal, it);
        dp__legal_remove(x, li);
        /* ---- PLC: device features from the partial schedule ---- */
        emin = dp__plc_features(x, v, f, zs);
        dp__gemm(zs, (size_t)H, f, DP__DF, wt_d, nd, DP__DF, H);
        dp__plc_logits(zs, w.p_w2, w.p_b2[0], nd, H, x->logit);
        for (d = 0; d < nd; d++) {
            x->logit[d] *= it;
            x->expert[d] = x->est[d] <= emin + 1e-9 * fabs(emin);
        }
        if (x->mlim) dp__plc_mask(x, v);
        ent = dp__softmax(x->logit, lp, nd, tr);
        a = ro->force_dev ? ro->force_dev[t] : dp__choose(lp, nd, ro->sample, ro->eps, rng);
        if (x->mlim && !x->mfit[a] && !ro->force_dev) {   /* exploration's uniform pick: among the devices it fits */
            int nf = 0;
            for (d = 0; d < nd; d++) nf += x->mfit[d];
            for (k = dp_rng_int(rng, nf), a = 0; ; a++) if (x->mfit[a] && k-- == 0) break;
        }
        if (x->mlim) dp__mem_place(&x->mem, x->assign, v, a);
        wc = tr ? dp__choice_record(x, ro, st, t, 1, lp, nd, a, ent, wdisc, adv, &pe) : wdisc;
        if (tr && g->in_off[v + 1] > g->in_off[v]) {   /* joined an input's device? */
            st->npar++;
            for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
                if (x->assign[x->isrc[k]] == a) { st->par++; break; }
        }
        if (ro->train) st->il_loss += dp__step_grad(lp, nd, a, wc, adv, ro->beta, ent, x->expert, pe, ilw,
                                                    x->step_gu + (size_t)t * nd, x->step_gf + (size_t)t * nd, NULL, it);
        /* ---- place v on a ---- */
        dp__place_step(x, t, v, a);
        if (x->overfull && ro->stop_above > 0) { st->stopped = 1; return; }   /* a sample over memory: no answer */
        if (ro->stop_above > 0 && (x->pathmax > ro->stop_above || x->work[a] > ro->stop_above)) { st->stopped = 1; return; }
        if (ro->critic) for (d = 0; d < nd; d++) x->crem -= dp__otime(x->optime, x->otw, v, d) / nd;
    }
}

/* The backward pass in three parts, so that several rollouts of one
   forward pass (dp_train_opts.rollouts) share the encoders' backward:
   dp__backward_zero, then dp__backward_heads per rollout (right after
   it, or after replaying it), then dp__backward_gnn once. */
static void dp__backward_zero(dp__gctx *x)
{
    memset(x->gnn[0].gh, 0, sizeof(double) * (size_t)x->n * x->H);
    if (!x->shared) memset(x->gnn[1].gh, 0, sizeof(double) * (size_t)x->n * x->H);
}

/* Gradient of the last rollout's loss times scale, R its (normalised)
   return, into the heads' parameters in gsel and gplc and into the
   embeddings' gradients (all accumulated). The loss per step is averaged
   over the n steps. Uses the rollout's records once (step_z is
   overwritten). */
static void dp__backward_heads(dp__gctx *x, const dp_policy *p, double R, double scale, double *gsel, double *gplc)
{
    dp__heads w, gw;
    int n = x->n, nd = x->nd, H = x->H, t, d, i, v;
    double inv = scale / n;
    const double *hs = dp__emb_sel(x), *hp = dp__emb_plc(x);
    dp__gnn_buf *bs = &x->gnn[0], *bp = &x->gnn[x->shared ? 0 : 1];
    size_t H2 = 2 * (size_t)H;
    dp__heads_map(&w, p->sel, p->plc, H, x->K, x->shared);
    dp__heads_map(&gw, gsel, gplc, H, x->K, x->shared);
    /* ---- PLC: per step and device, the gradient gz at the first layer
       (into step_z); gA_v sums v's own, G_d the running sum over the steps
       of gz / (ops on d), from which gP_v = G_d(end) - G_d(when v joined) ---- */
    memset(x->G, 0, sizeof(double) * (size_t)nd * H);
    memset(x->gAP, 0, sizeof(double) * (size_t)n * H2);
    for (d = 0; d < nd; d++) x->cnt[d] = 0;
    for (t = 0; t < n; t++) {
        double *zs = x->step_z + (size_t)t * nd * H, *gA;
        v = x->step_op[t];
        gA = x->gAP + (size_t)v * H2;
        for (d = 0; d < nd; d++) {
            double gs = (R * x->step_gu[(size_t)t * nd + d] + x->step_gf[(size_t)t * nd + d]) * inv;
            double *z = zs + (size_t)d * H;
            if (gs == 0) { memset(z, 0, sizeof(double) * (size_t)H); continue; }
            gw.p_b2[0] += gs;
            for (i = 0; i < H; i++) {
                gw.p_w2[i] += gs * dp__relu(z[i]);
                z[i] = z[i] > 0 ? gs * w.p_w2[i] : 0;
            }
            for (i = 0; i < H; i++) gA[i] += z[i];
            if (x->cnt[d] > 0) for (i = 0; i < H; i++) x->G[(size_t)d * H + i] += z[i] / x->cnt[d];
        }
        /* v joins its device: later steps' gradients reach it through G */
        memcpy(x->snap + (size_t)v * H, x->G + (size_t)x->step_dev[t] * H, sizeof(double) * (size_t)H);
        x->cnt[x->step_dev[t]] += 1;
    }
    dp__gemm_tn(gw.p_wd, x->step_z, (size_t)H, x->step_f, DP__DF, n * nd, H, DP__DF);
    for (v = 0; v < n; v++) {
        double *gP = x->gAP + (size_t)v * H2 + H;
        const double *Gd = x->G + (size_t)x->assign[v] * H;
        for (i = 0; i < H; i++) gP[i] = Gd[i] - x->snap[(size_t)v * H + i];
    }
    dp__colsum(gw.p_b1, x->gAP, H2, n, H);
    dp__gemm_tn(gw.p_wx, x->gAP, H2, x->x, DP__F, n, H, DP__F);
    dp__gemm_tn(gw.p_wh, x->gAP, H2, hp, (size_t)H, n, H, H);
    dp__gemm_tn(gw.p_we, x->gAP + H, H2, hp, (size_t)H, n, H, H);
    /* [gA gP] [Wh; We]: Wh and We are adjacent blocks */
    dp__gemm(bp->gh, (size_t)H, x->gAP, H2, w.p_wh, n, 2 * H, H);
    /* ---- SEL: gz per op into gzs ---- */
    for (v = 0; v < n; v++) {
        double gs = (R * x->gsel_pg[v] + x->gsel_fix[v]) * inv, *gz = x->gzs + (size_t)v * H;
        const double *z = x->zsel + (size_t)v * H;
        if (gs == 0) { memset(gz, 0, sizeof(double) * (size_t)H); continue; }
        gw.s_b2[0] += gs;
        for (i = 0; i < H; i++) {
            gw.s_w2[i] += gs * dp__relu(z[i]);
            gz[i] = z[i] > 0 ? gs * w.s_w2[i] : 0;
        }
    }
    dp__colsum(gw.s_b1, x->gzs, (size_t)H, n, H);
    dp__gemm_tn(gw.s_wx, x->gzs, (size_t)H, x->x, DP__F, n, H, DP__F);
    dp__gemm_tn(gw.s_wh, x->gzs, (size_t)H, hs, (size_t)H, n, H, H);
    dp__gemm_tn(gw.s_wpb, x->gzs, (size_t)H, x->pb, (size_t)H, n, H, H);
    dp__gemm_tn(gw.s_wpt, x->gzs, (size_t)H, x->pt, (size_t)H, n, H, H);
    dp__gemm(bs->gh, (size_t)H, x->gzs, (size_t)H, w.s_wh, n, H, H);
    memset(x->gpb, 0, sizeof(double) * (size_t)n * H);
    memset(x->gpt, 0, sizeof(double) * (size_t)n * H);
    dp__gemm(x->gpb, (size_t)H, x->gzs, (size_t)H, w.s_wpb, n, H, H);
    dp__gemm(x->gpt, (size_t)H, x->gzs, (size_t)H, w.s_wpt, n, H, H);
    /* pb_v = S_v / L_v with S_v = h_v + S_next: turn gpb into gS, then walk
       the paths forward (topo order), handing gS on to the next op */
    for (v = 0; v < n; v++) for (i = 0; i < H; i++) x->gpb[(size_t)v * H + i] /= x->blen[v];
    for (t = 0; t < n; t++) {
        v = x->g->topo[t];
        for (i = 0; i < H; i++) {
            double gS = x->gpb[(size_t)v * H + i];
            bs->gh[(size_t)v * H + i] += gS;
            if (x->bnext[v] >= 0) x->gpb[(size_t)x->bnext[v] * H + i] += gS;
        }
    }
    for (v = 0; v < n; v++) for (i = 0; i < H; i++) x->gpt[(size_t)v * H + i] /= x->tlen[v];
    for (t = n - 1; t >= 0; t--) {
        v = x->g->topo[t];
        for (i = 0; i < H; i++) {
            double gS = x->gpt[(size_t)v * H + i];
            bs->gh[(size_t)v * H + i] += gS;
            if (x->tprev[v] >= 0) x->gpt[(size_t)x->tprev[v] * H + i] += gS;
        }
    }
}

/* The encoders' backward from the embeddings' gradients. */
static void dp__backward_gnn(dp__gctx *x, const dp_policy *p, double *gsel, double *gplc)
{
    dp__heads w, gw;
    dp__heads_map(&w, p->sel, p->plc, x->H, x->K, x->shared);
    dp__heads_map(&gw, gsel, gplc, x->H, x->K, x->shared);
    dp__gnn_backward(x, &x->gnn[0], w.gnn_sel, gw.gnn_sel);
    if (!x->shared) dp__gnn_backward(x, &x->gnn[1], w.gnn_plc, gw.gnn_plc);
}

/* Gradient of the last rollout's loss, R the (normalised) return, into
   gsel and gplc (accumulated). */
static void dp__backward(dp__gctx *x, const dp_policy *p, double R, double *gsel, double *gplc)
{
    dp__backward_zero(x);
    dp__backward_heads(x, p, R, 1.0, gsel, gplc);
    dp__backward_gnn(x, p, gsel, gplc);
}

/* ======================================================================
   >>placeto
   Placeto (Addanki et al., NeurIPS 2019) on the shared layer of >>gnn.
   An episode starts from a placement and visits the ops in topological
   order; at each step the policy moves the current op to a device, and
   the reward is the decrease in simulated makespan that move caused.
     features  per op (F = 4 + D): mean op time and output transfer time
               (z-scored over the graph), 1 for the current op, 1 for the
               ops already visited, the one-hot of its current device
     embedding h0 = relu(Win x + bin), then K pairs of progressive rounds
               (FWD over parents in topological order, BWD over children
               in reverse), recomputed after every move: the features
               changed, and a progressive pass carries a change to every
               descendant (FWD) and then to all their ancestors (BWD), so
               there is no K-hop neighbourhood to recompute alone
     head      for the current op v, u = [e_v; mean e over v's ancestors;
               over its descendants; over the rest (its parallel group)]
               (an empty group gives zeros); logits = W2 relu(W1 u + b1)
               + b2 + keep * onehot(v's current device), softmax over the
               D devices. keep is one learned scalar, 3 at first: a prior
               toward leaving an op where it is, so that early sweeps stay
               near the starting placement (a uniform first policy
               re-randomises every op and its REINFORCE signal drowns in
               the noise of the other moves; see bench/RESULTS.md)
   Stage sim only; defaults: lr 3e-3, start cp. Two updates:
   - the one-step improvement (the default, beyond the paper;
     dp_train_opts.placeto_reinforce 0): at every step the visited op v is
     simulated on each of the D devices (D - 1 more simulations; its own
     is the makespan M now), r_d = (M - M_d) / starting makespan, and the
     policy is moved toward the improved distribution
         q_d = p_d e^(r_d / tau) / Z      (tau: placeto_tau, 0.01)
     by the step loss -sum_d q_d log p_d with q held fixed (gradient
     w.r.t. the logits p - q; MPO's E- and M-step, Abdolmaleki et al.
     2018, with every action's one-step value known exactly). The sweep
     moves each op to its most likely device (with probability eps to a
     random one): the states greedy placement meets. Why: under the
     paper's update the greedy sweep ended where it started on ffnn and
     llama-block at 9 of 10 seeds (bench/RESULTS.md part 4): each move's
     return carried the noise of every later random move, the one sampled
     device per state taught nothing of the others, and the keep prior's
     states were seldom the greedy sweep's. gamma is unused: each step is
     credited with its own makespan change (cp is a local optimum of
     every single move on ffnn, which no one-step sweep leaves).
   - REINFORCE (the paper's; placeto_reinforce 1), defaults gamma 1 (the
     return of the sweep's first step is then the whole improvement
     M0 - M_end): sampled sweeps, r_t = (makespan before the move -
     makespan after) / starting makespan, R_t = r_t + gamma R_{t+1}, and
     b_t the running mean of R_t at step t on that graph. The gradient is
     accumulated during the episode, keeping no step, with an eligibility
     trace E_t = gamma E_{t-1} + g_t (g_t the gradient of -log p(a_t)):
       sum_t (R_t - b_t) g_t = sum_t (r_t E_t - b_t g_t).
   Parameter layout (one block, dp_policy.plc): Win[H][F] bin[H]; K pairs
   of a FWD round and a BWD round; W1[H][4H] b1[H] W2[D][H] b2[D].
   ====================================================================== */
#define DP__PT_F(D) (4 + (D))

static size_t dp__pt_round_off(int H, int D, int r) { return (size_t)H * DP__PT_F(D) + H + (size_t)r * dp__mp_size(H, DP__MP_FWD); }
static size_t dp__pt_size(int H, int D, int K) { return dp__pt_round_off(H, D, 2 * K) + 4 * (size_t)H * H + H + (size_t)D * H + D + 1; }

typedef struct dp__pt_head_w { double *w1, *b1, *w2, *b2, *keep; } dp__pt_head_w;

static void dp__pt_head_map(dp__pt_head_w *h, double *W, int H, int D, int K)
{
    h->w1 = W + dp__pt_round_off(H, D, 2 * K);
    h->b1 = h->w1 + 4 * (size_t)H * H;
    h->w2 = h->b1 + H;
    h->b2 = h->w2 + (size_t)D * H;
    h->keep = h->b2 + D;
}

typedef struct dp__pctx {
    const dp_graph *g; const dp_cluster *c;
    int n, nd, H, K, F, train;
    double *x;            /* [n F] features, the last D + 2 change per step */
    dp__ef ef;            /* the edge feature, as DOPPLER's             */
    double *wt;           /* the weights with every matrix transposed in
                             place of its block (dp__pt_embed)         */
    dp__gnn_buf gnn;      /* 2K rounds                                  */
    int *mark;            /* 0 the current op, 1 ancestor, 2 descendant, 3 parallel */
    int *stack;
    double cnt[4];
    double *u, *z, *gu, *gz, *logit, *prob, *dl; /* head: [4H] [H] [4H] [H] [D] [D] [D] */
    int *start, *assign, *best_assign, *act;     /* [n]                 */
    int *tb_assign, *tb_order;                   /* [n] dp_train's best  */
    double *base, *mstep, *adv, *prio;           /* [n]                 */
    double *lp;           /* [n] log p of each step's move               */
    double *md;           /* [D] one-step improvement: the makespan with the
                             current op on each device                  */
    int mlim;             /* a cluster with memory limits: a move must keep
                             the placement within them                   */
    char *mfit;           /* [D] the devices the current op may move to  */
    double *mscr;         /* [D] scratch of dp__all_fit                   */
    long sims;            /* simulations in the last episode              */
    double m0;            /* makespan of the starting placement          */
    long start_sims;      /* the simulations that placement took          */
    double lower_bound, decay;
    void *arena;          /* every buffer above lives in this one block */
    dp_sim sim;
    /* training statistics, as dp__gctx's */
    double baseline, best, run_best;
    int seen;
} dp__pctx;

static void dp__pt_free(dp__pctx *x)
{
    if (!x) return;
    DP_FREE(x->arena);
    dp_sim_free(&x->sim);
    memset(x, 0, sizeof *x);
}

static int dp__pt_init(dp__pctx *x, const dp_graph *g, const dp_cluster *c, const dp_policy *p, dp_method start,
                       dp_order order, int train, dp_error *err)
{
    int n = g->n_ops, D = c->n, H = p->opts.hidden, K = p->opts.layers, F = DP__PT_F(D), v, k, rc, pass;
    double lat, ibw, mean_t = 0;
    dp_place_opts po;
    dp__arena ar;
    memset(&ar, 0, sizeof ar);
    memset(x, 0, sizeof *x);
    if ((rc = dp_check(g, c, err))) return rc;
    if (D != p->opts.devices)
        return dp__fail(err, DP_ERR_ARG, "placeto: the policy places on %d devices, the cluster has %d (train one for %d)", p->opts.devices, D, D);
    x->g = g; x->c = c; x->n = n; x->nd = D; x->H = H; x->K = K; x->F = F; x->train = train;
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &x->arena, err, "placeto workspace"))) { dp__pt_free(x); return rc; }
        DP__A(x->x, (size_t)n * F, double);
        DP__A(x->mark, n, int); DP__A(x->stack, n, int);
        DP__A(x->u, 4 * H, double); DP__A(x->z, H, double); DP__A(x->gu, 4 * H, double); DP__A(x->gz, H, double);
        DP__A(x->logit, D, double); DP__A(x->prob, D, double); DP__A(x->dl, D, double);
        DP__A(x->start, n, int); DP__A(x->assign, n, int); DP__A(x->best_assign, n, int); DP__A(x->act, n, int);
        DP__A(x->base, n, double); DP__A(x->mstep, n, double); DP__A(x->adv, n, double); DP__A(x->prio, n, double);
        DP__A(x->lp, n, double); DP__A(x->md, D, double); DP__A(x->wt, dp__pt_size(H, D, K), double);
        DP__A(x->tb_assign, n, int); DP__A(x->tb_order, n, int);
        DP__A(x->mfit, D, char); DP__A(x->mscr, D, double);
        dp__gnn_buf_carve(&ar, &ar, &x->gnn, n, H, 2 * K, train, NULL, 0);
    }
    x->mlim = dp__limited(c);
    if ((rc = dp_sim_init(&x->sim, g, c, err))) { dp__pt_free(x); return rc; }
    dp__mean_link(c, &lat, &ibw);
    for (v = 0; v < n; v++) {
        double *r = x->x + (size_t)v * F, out = g->out_bytes[v];
        for (k = g->out_off[v]; k < g->out_off[v + 1]; k++) if (g->bytes[g->out_edge[k]] > out) out = g->bytes[g->out_edge[k]];
        r[0] = dp__mean_time(g, c, v);
        r[1] = dp__edge_mean(c, out, lat, ibw);
        mean_t += r[0];
    }
    mean_t /= n;
    dp__zscore(x->x, n, F, 2);
    dp__ef_init(&x->ef, g, c, lat, ibw, mean_t);
    memset(&po, 0, sizeof po);
    po.order = order;
    po.no_fallback = 1;   /* the method's own placement */
    {
        dp_place_result pr;
        char pre[96];
        if ((rc = dp_place(start, g, c, &po, x->start, &pr, err))) {
            snprintf(pre, sizeof pre, "placeto: starting placement (%s): ", dp_method_name(start));
            if (err) dp__prefix(err, pre);
            dp__pt_free(x);
            return rc;
        }
        x->m0 = pr.makespan;
        x->start_sims = pr.simulations;
    }
    if (!(x->m0 > 0)) { dp__pt_free(x); return dp__fail(err, DP_ERR_RANGE, "placeto: the starting placement has makespan %g; nothing to improve", x->m0); }
    if ((rc = dp__lower_bound(g, c, &x->lower_bound, err))) { dp__pt_free(x); return rc; }
    return 0;
}

/* Makespan of x->assign, scored like every placer (visit order as priority). */
static int dp__sim_cost(dp_sim *s, const int *assign, const int *order, dp_order mode, double *prio,
                        double *cost, dp_error *err);   /* >>train */
static int dp__pt_makespan(dp__pctx *x, dp_order order, double *ms, dp_error *err)
{
    return dp__sim_cost(&x->sim, x->assign, x->g->topo, order, x->prio, ms, err);
}

/* The embedding of the current features into round 2K of gnn.h; x->wt gets the
   transposed weights of W (dp__pt_head reads them). */
static void dp__pt_embed(dp__pctx *x, const double *W)
{
    dp__gnn_buf *b = &x->gnn;
    dp__pt_head_w hw, ht;
    int r, H = x->H, D = x->nd;
    dp__transpose(x->wt, W, H, x->F);
    for (r = 0; r < 2 * x->K; r++)
        dp__mp_transpose(x->wt + dp__pt_round_off(H, D, r), W + dp__pt_round_off(H, D, r), H, r % 2 ? DP__MP_BWD : DP__MP_FWD);
    dp__pt_head_map(&hw, (double *)W, H, D, x->K);
    dp__pt_head_map(&ht, x->wt, H, D, x->K);
    dp__transpose(ht.w1, hw.w1, H, 4 * H);
    dp__mp_input(x->n, H, x->F, x->x, W, x->wt, b->pre, b->h);
    for (r = 0; r < 2 * x->K; r++)
        dp__mp_forward(x->g, &x->ef, H, r % 2 ? DP__MP_BWD : DP__MP_FWD, W + dp__pt_round_off(H, D, r),
                       x->wt + dp__pt_round_off(H, D, r),
                       dp__gnn_round(b, b->h, r), dp__gnn_round(b, b->h, r + 1), dp__gnn_round(b, b->pre, r + 1),
                       dp__gnn_round(b, b->mf, r), dp__gnn_round(b, b->mb, r), 0, 1);
}

/* The head at op v: groups, u, z, logits and prob; returns the entropy.
   After dp__pt_embed with the same W. */
static double dp__pt_head(dp__pctx *x, const double *W, int v)
{
    const dp_graph *g = x->g;
    dp__pt_head_w w, wt;
    const double *e = dp__gnn_round(&x->gnn, x->gnn.h, 2 * x->K);
    int n = x->n, H = x->H, D = x->nd, sp, q, k, i, grp;
    dp__pt_head_map(&w, (double *)W, H, D, x->K);
    for (q = 0; q < n; q++) x->mark[q] = 3;
    x->mark[v] = 0;
    /* ancestors (1) through in-edges, descendants (2) through out-edges */
    for (grp = 1; grp <= 2; grp++) {
        sp = 0; x->stack[sp++] = v;
        while (sp) {
            int y = x->stack[--sp];
            int lo = grp == 1 ? g->in_off[y] : g->out_off[y], hi = grp == 1 ? g->in_off[y + 1] : g->out_off[y + 1];
            for (k = lo; k < hi; k++) {
                int z = grp == 1 ? g->src[g->in_edge[k]] : g->dst[g->out_edge[k]];
                if (x->mark[z] == 3) { x->mark[z] = grp; x->stack[sp++] = z; }
            }
        }
    }
    memset(x->u, 0, sizeof(double) * 4 * (size_t)H);
    x->cnt[0] = x->cnt[1] = x->cnt[2] = x->cnt[3] = 0;
    for (q = 0; q < n; q++) {
        double *uq = x->u + (size_t)x->mark[q] * H;
        const double *eq = e + (size_t)q * H;
        x->cnt[x->mark[q]] += 1;
        for (i = 0; i < H; i++) uq[i] += eq[i];
    }
    for (grp = 1; grp < 4; grp++)
        if (x->cnt[grp] > 0) for (i = 0; i < H; i++) x->u[(size_t)grp * H + i] /= x->cnt[grp];
    memcpy(x->z, w.b1, sizeof(double) * (size_t)H);
    dp__pt_head_map(&wt, x->wt, H, D, x->K);
    dp__gemm(x->z, (size_t)H, x->u, 4 * (size_t)H, wt.w1, 1, 4 * H, H);
    for (k = 0; k < D; k++) {
        double s = w.b2[k] + w.keep[0] * x->x[(size_t)v * x->F + 4 + k];
        for (i = 0; i < H; i++) s += w.w2[(size_t)k * H + i] * dp__relu(x->z[i]);
        x->logit[k] = s;
    }
    return dp__softmax(x->logit, x->prob, D, 1);
}

/* gW += d(logits . x->dl)/dW for the state dp__pt_head last saw (op v). */
static void dp__pt_backward(dp__pctx *x, const double *W, int v, double *gW)
{
    dp__pt_head_w w, gw;
    dp__gnn_buf *b = &x->gnn;
    size_t nH = (size_t)x->n * x->H;
    int n = x->n, H = x->H, D = x->nd, q, i, k, r;
    dp__pt_head_map(&w, (double *)W, H, D, x->K);
    dp__pt_head_map(&gw, gW, H, D, x->K);
    for (k = 0; k < D; k++) gw.keep[0] += x->dl[k] * x->x[(size_t)v * x->F + 4 + k];
    memset(x->gz, 0, sizeof(double) * (size_t)H);
    for (k = 0; k < D; k++) {
        double d = x->dl[k];
        const double *w2 = w.w2 + (size_t)k * H;
        double *gw2 = gw.w2 + (size_t)k * H;
        if (d == 0) continue;
        gw.b2[k] += d;
        for (i = 0; i < H; i++) { gw2[i] += d * dp__relu(x->z[i]); x->gz[i] += d * w2[i]; }
    }
    for (i = 0; i < H; i++) x->gz[i] = x->z[i] > 0 ? x->gz[i] : 0;
    for (i = 0; i < H; i++) gw.b1[i] += x->gz[i];
    dp__gemm_tn(gw.w1, x->gz, (size_t)H, x->u, 4 * (size_t)H, 1, H, 4 * H);
    memset(x->gu, 0, sizeof(double) * 4 * (size_t)H);
    dp__gemm(x->gu, 4 * (size_t)H, x->gz, (size_t)H, w.w1, 1, H, 4 * H);
    /* into the final embedding: e_v directly, the others through their group mean */
    for (q = 0; q < n; q++) {
        int grp = x->mark[q];
        double s = grp ? 1.0 / x->cnt[grp] : 1.0, *gh = b->gh + (size_t)q * H;
        const double *gu = x->gu + (size_t)grp * H;
        for (i = 0; i < H; i++) gh[i] = s * gu[i];
    }
    for (r = 2 * x->K - 1; r >= 0; r--) {
        dp__mp_backward(x->g, &x->ef, H, r % 2 ? DP__MP_BWD : DP__MP_FWD, W + dp__pt_round_off(H, D, r),
                        gW + dp__pt_round_off(H, D, r), dp__gnn_round(b, b->h, r), dp__gnn_round(b, b->pre, r + 1),
                        dp__gnn_round(b, b->mf, r), dp__gnn_round(b, b->mb, r), b->gh, b->gtmp, b->gT, b->gM);
        memcpy(b->gh, b->gtmp, sizeof(double) * nH);
    }
    dp__mp_input_backward(n, H, x->F, x->x, b->pre, b->gh, gW, b->gT);
}

/* The one-step improvement at op v, makespan M now (ro->improve): the
   makespan with v on every other device into x->md (D - 1 simulations;
   x->md[current] = M), the target q_d = p_d e^(r_d / tau) / Z with
   r_d = (M - md_d) / m0, and g1 += gs = the gradient of the step's loss
   -sum_d q_d log p_d, q held fixed (w.r.t. the logits: p - q). Every
   placement simulated is offered to the sweep's best. After dp__pt_head
   at v. */
static int dp__pt_improve(dp__pctx *x, const dp_policy *p, const dp__roll_opts *ro, int v, double M, dp_order order,
                          double *g1, double *gs, dp__roll_stats *st, dp_error *err)
{
    int D = x->nd, cur = x->assign[v], d, i, rc;
    double mx = -HUGE_VAL, z = 0;
    for (d = 0; d < D; d++) {
        if (d == cur) { x->md[d] = M; continue; }
        if (x->mlim && !x->mfit[d]) { x->md[d] = HUGE_VAL; continue; }   /* over memory: q_d = 0 */
        x->assign[v] = d;
        rc = dp__pt_makespan(x, order, &x->md[d], err);
        if (!rc && x->md[d] < x->run_best) { x->run_best = x->md[d]; memcpy(x->best_assign, x->assign, sizeof(int) * (size_t)x->n); }
        x->assign[v] = cur;
        if (rc) return rc;
        x->sims++;
    }
    /* log q_d + log Z, then q in x->dl */
    for (d = 0; d < D; d++) {
        x->dl[d] = log(x->prob[d] > 1e-300 ? x->prob[d] : 1e-300) + (M - x->md[d]) / (x->m0 * ro->tau);
        if (x->dl[d] > mx) mx = x->dl[d];
    }
    for (d = 0; d < D; d++) { x->dl[d] = exp(x->dl[d] - mx); z += x->dl[d]; }
    for (d = 0; d < D; d++) {
        double q = x->dl[d] / z;
        st->wlogp += q * log(x->prob[d] > 1e-300 ? x->prob[d] : 1e-300);
        x->dl[d] = x->prob[d] - q;
    }
    memset(gs, 0, sizeof(double) * (size_t)p->n_plc);
    dp__pt_backward(x, p->plc, v, gs);
    for (i = 0; i < p->n_plc; i++) g1[i] += gs[i];
    return 0;
}

/* One sweep over the ops from x->start. With ro->train, g1 gets the
   gradient of the episode loss (mean over steps) and g2, gs are scratch
   (all of p->n_plc); ro->il is unused (Placeto has no expert). Records
   x->act, x->mstep and, when training with REINFORCE, x->adv; x->best_assign
   gets the best placement the sweep simulated (x->run_best its makespan).
   A training sweep of the one-step improvement (ro->improve) moves each
   op to the policy's most likely device, or with probability ro->eps to
   one drawn uniformly: its gradient already weighs every device, so the
   sweep needs no sampling to explore them, and it visits the states the
   greedy sweep will meet (the eps moves vary them). */
static int dp__pt_episode(dp__pctx *x, const dp_policy *p, const dp__roll_opts *ro, int force, dp_rng *rng,
                          dp_order order, double *g1, double *g2, double *gs, double *cost,
                          dp__roll_stats *st, dp_error *err)
{
    int n = x->n, D = x->nd, F = x->F, np = p->n_plc, t, v, d, i, rc;
    double M = x->m0;
    memset(st, 0, sizeof *st);
    memcpy(x->assign, x->start, sizeof(int) * (size_t)n);
    memcpy(x->best_assign, x->start, sizeof(int) * (size_t)n);
    x->run_best = M;
    x->sims = 0;
    for (v = 0; v < n; v++) {
        double *row = x->x + (size_t)v * F;
        row[2] = row[3] = 0;
        for (d = 0; d < D; d++) row[4 + d] = d == x->start[v];
    }
    if (ro->train) memset(g2, 0, sizeof(double) * (size_t)np);
    for (t = 0; t < n; t++) {
        double *row, ent;
        int a;
        v = x->g->topo[t];
        row = x->x + (size_t)v * F;
        row[2] = 1;
        dp__pt_embed(x, p->plc);
        ent = dp__pt_head(x, p->plc, v);
        for (d = 0; d < D; d++) x->mfit[d] = 1;
        if (x->mlim) {
            /* the moves that keep the placement within memory: the policy's
               softmax renormalised over them (its current device always) */
            int cur = x->assign[v];
            double z = 0;
            for (d = 0; d < D; d++) {
                if (d != cur) { x->assign[v] = d; x->mfit[d] = (char)dp__all_fit(x->g, x->c, x->assign, x->mscr); }
                if (x->mfit[d]) z += x->prob[d];
            }
            x->assign[v] = cur;
            ent = 0;
            for (d = 0; d < D; d++) {
                x->prob[d] = x->mfit[d] ? (z > 0 ? x->prob[d] / z : d == cur) : 0;
                if (x->prob[d] > 0) ent -= x->prob[d] * log(x->prob[d]);
            }
        }
        if (force) a = x->act[t];
        else if (ro->improve) {
            a = dp__choose(x->prob, D, 0, 0, rng);
            if (ro->eps > 0 && dp_rng_uniform(rng) < ro->eps) a = dp_rng_int(rng, D);
        } else a = dp__choose(x->prob, D, ro->sample, ro->eps, rng);
        if (!x->mfit[a]) a = x->assign[v];   /* exploration's uniform pick over memory: stay */
        x->act[t] = a;
        x->mstep[t] = M;
        x->lp[t] = log(x->prob[a] > 1e-300 ? x->prob[a] : 1e-300);
        st->entropy += ent;
        st->logp += x->lp[t];
        if (ro->train && ro->improve) {
            if ((rc = dp__pt_improve(x, p, ro, v, M, order, g1, gs, st, err))) return rc;
        } else if (ro->train) {
            /* gradient of -log p(a): prob - onehot(a), w.r.t. the logits */
            for (d = 0; d < D; d++) x->dl[d] = x->prob[d] - (d == a);
            memset(gs, 0, sizeof(double) * (size_t)np);
            dp__pt_backward(x, p->plc, v, gs);
        }
        row[2] = 0; row[3] = 1;
        row[4 + x->assign[v]] = 0; row[4 + a] = 1;
        if (a != x->assign[v]) {
            x->assign[v] = a;
            if (ro->train && ro->improve) M = x->md[a];   /* simulated above */
            else {
                if ((rc = dp__pt_makespan(x, order, &M, err))) return rc;
                x->sims++;
            }
            if (M < x->run_best) { x->run_best = M; memcpy(x->best_assign, x->assign, sizeof(int) * (size_t)n); }
        }
        if (ro->train && !ro->improve) {
            /* the trace E_t = gamma E_{t-1} + g_t; the reward r_t of this
               move joins every earlier step's return through it */
            double rt = (x->mstep[t] - M) / x->m0, bt = x->base[t];
            for (i = 0; i < np; i++) {
                g2[i] = ro->gamma * g2[i] + gs[i];
                g1[i] += rt * g2[i] - bt * gs[i];
            }
        }
    }
    *cost = M;
    if (ro->train && ro->improve) {
        for (i = 0; i < np; i++) g1[i] /= n;
    } else if (ro->train) {
        double R = 0, inv = 1.0 / n;
        for (i = 0; i < np; i++) g1[i] = x->seen ? g1[i] * inv : 0;
        for (t = n - 1; t >= 0; t--) {
            R = (x->mstep[t] - (t + 1 < n ? x->mstep[t + 1] : M)) / x->m0 + ro->gamma * R;
            x->adv[t] = x->seen ? R - x->base[t] : 0;
            st->wlogp += x->adv[t] * x->lp[t];
            x->base[t] = x->seen ? x->decay * x->base[t] + (1 - x->decay) * R : R;
        }
    }
    return 0;
}

/* ======================================================================
   >>train
   ====================================================================== */
static const char *const dp__stage_names[] = { "il", "sim", "real" };
DPDEF const char *dp_stage_name(dp_stage s) { return dp__name_of(dp__stage_names, DP_STAGE__COUNT, (int)s); }

static void dp__policy_sizes(const dp_policy_opts *o, int *n_sel, int *n_plc)
{
    if (o->algo == DP_ALGO_PLACETO) {
        *n_sel = 0;
        *n_plc = (int)dp__pt_size(o->hidden, o->devices, o->layers);
        return;
    }
    *n_sel = (int)(dp__gnn_size(o->hidden, o->layers) + dp__selhead_size(o->hidden));
    *n_plc = (int)((o->shared_gnn ? 0 : dp__gnn_size(o->hidden, o->layers)) + dp__plchead_size(o->hidden));
}

static int dp__policy_alloc(dp_policy *p, const dp_policy_opts *opts, dp_error *err)
{
    int pt;
    memset(p, 0, sizeof *p);
    if (opts) p->opts = *opts;
    if (p->opts.algo == 0) p->opts.algo = DP_ALGO_DOPPLER;
    if (p->opts.algo != DP_ALGO_DOPPLER && p->opts.algo != DP_ALGO_PLACETO) return dp__fail(err, DP_ERR_ARG, "policy: unknown algorithm %d", (int)p->opts.algo);
    pt = p->opts.algo == DP_ALGO_PLACETO;
    if (p->opts.hidden == 0) p->opts.hidden = 32;
    if (p->opts.layers == 0) p->opts.layers = pt ? 1 : 3;
    if (p->opts.hidden < 1 || p->opts.hidden > DP_MAX_HIDDEN) return dp__fail(err, p->opts.hidden < 1 ? DP_ERR_RANGE : DP_ERR_LIMIT, "hidden size %d not in 1..%d (DP_MAX_HIDDEN)", p->opts.hidden, DP_MAX_HIDDEN);
    if (p->opts.layers < 0 || p->opts.layers > DP_MAX_LAYERS) return dp__fail(err, p->opts.layers < 0 ? DP_ERR_RANGE : DP_ERR_LIMIT, "layers %d not in 0..%d (DP_MAX_LAYERS)", p->opts.layers, DP_MAX_LAYERS);
    if (pt && p->opts.devices == 0) p->opts.devices = 4;
    if (pt && (p->opts.devices < 1 || p->opts.devices > DP_MAX_DEVICES)) return dp__fail(err, p->opts.devices < 1 ? DP_ERR_RANGE : DP_ERR_LIMIT, "placeto: devices %d not in 1..%d (DP_MAX_DEVICES)", p->opts.devices, DP_MAX_DEVICES);
    if (!pt) p->opts.devices = 0;
    if (p->opts.insertion != 0 && (pt || p->opts.insertion != 1))
        return dp__fail(err, DP_ERR_ARG, "policy: insertion %d (0 or 1, and DOPPLER only)", p->opts.insertion);
    p->opts.shared_gnn = !pt && p->opts.shared_gnn != 0;
    p->algo = p->opts.algo;
    dp__policy_sizes(&p->opts, &p->n_sel, &p->n_plc);
    if (p->n_sel && !(p->sel = (double *)dp__alloc((size_t)p->n_sel, sizeof(double), err, "policy"))) { dp_policy_free(p); return DP_ERR_NOMEM; }
    if (!(p->plc = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "policy"))) { dp_policy_free(p); return DP_ERR_NOMEM; }
    return 0;
}

DPDEF void dp_policy_free(dp_policy *p)
{
    if (!p) return;
    DP_FREE(p->sel); DP_FREE(p->plc); DP_FREE(p->op_table);
    memset(p, 0, sizeof *p);
}

/* Weights uniform in +-1/sqrt(fan_in), biases 0; the GNN rounds start
   small so that the residual embedding begins close to h0. */
static void dp__init_block(double *W, int out, int in, double gain, dp_rng *r)
{
    int i;
    double a = gain / sqrt((double)in);
    for (i = 0; i < out * in; i++) W[i] = a * (2 * dp_rng_uniform(r) - 1);
}

static void dp__init_gnn(double *W, int H, int K, dp_rng *r)
{
    int k;
    dp__init_block(W, H, DP__F, 1.0, r);
    for (k = 0; k < K; k++) {
        double *ro = W + dp__round_off(H, k);
        dp__init_block(ro, H, H, 0.5, r);
        dp__init_block(ro + (size_t)H * H, H, H, 0.5, r);
        dp__init_block(ro + 2 * (size_t)H * H, H, H, 0.5, r);
        dp__init_block(ro + 3 * (size_t)H * H, 2, H, 0.5, r);   /* af, ab */
    }
}

DPDEF int dp_policy_init(dp_policy *p, const dp_policy_opts *opts, dp_error *err)
{
    dp__heads w;
    dp_rng r;
    int rc, H;
    if ((rc = dp__policy_alloc(p, opts, err))) return rc;
    H = p->opts.hidden;
    dp_rng_seed(&r, p->opts.seed);
    if (p->algo == DP_ALGO_PLACETO) {
        int D = p->opts.devices, k;
        dp__pt_head_w hw;
        dp__init_block(p->plc, H, DP__PT_F(D), 1.0, &r);
        for (k = 0; k < 2 * p->opts.layers; k++) {
            dp__mp_w mw;
            dp__mp_map(&mw, p->plc + dp__pt_round_off(H, D, k), H, k % 2 ? DP__MP_BWD : DP__MP_FWD);
            dp__init_block(mw.ws, H, H, 0.5, &r);
            dp__init_block(mw.wf ? mw.wf : mw.wb, H, H, 0.5, &r);
            dp__init_block(mw.af ? mw.af : mw.ab, 1, H, 0.5, &r);
        }
        dp__pt_head_map(&hw, p->plc, H, D, p->opts.layers);
        dp__init_block(hw.w1, H, 4 * H, 1.0, &r);
        dp__init_block(hw.w2, D, H, 1.0, &r);
        hw.keep[0] = 3.0;   /* P(keep) = e^3 / (e^3 + D - 1) at first: 87% on 4 devices */
        return 0;
    }
    dp__heads_map(&w, p->sel, p->plc, H, p->opts.layers, p->opts.shared_gnn);
    dp__init_gnn(w.gnn_sel, H, p->opts.layers, &r);
    if (!p->opts.shared_gnn) dp__init_gnn(w.gnn_plc, H, p->opts.layers, &r);
    dp__init_block(w.s_wx, H, DP__F, 1.0, &r); dp__init_block(w.s_wh, H, H, 1.0, &r);
    dp__init_block(w.s_wpb, H, H, 1.0, &r);   dp__init_block(w.s_wpt, H, H, 1.0, &r);
    dp__init_block(w.s_w2, 1, H, 1.0, &r);
    dp__init_block(w.p_wd, H, DP__DF, 1.0, &r); dp__init_block(w.p_wx, H, DP__F, 1.0, &r);
    dp__init_block(w.p_wh, H, H, 1.0, &r);      dp__init_block(w.p_we, H, H, 1.0, &r);
    dp__init_block(w.p_w2, 1, H, 1.0, &r);
    return 0;
}

typedef struct dp__adam { double *m, *v; long t; int n; } dp__adam;

static void dp__adam_step(dp__adam *a, double *w, double *g, double lr, double clip)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double norm, sc = 1, c1, c2, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i;
    /* four partial sums: a fixed order the compiler can keep in one vector */
    for (i = 0; i + 4 <= a->n; i += 4) {
        s0 += g[i] * g[i]; s1 += g[i + 1] * g[i + 1];
        s2 += g[i + 2] * g[i + 2]; s3 += g[i + 3] * g[i + 3];
    }
    for (; i < a->n; i++) s0 += g[i] * g[i];
    norm = sqrt((s0 + s1) + (s2 + s3));
    if (clip > 0 && norm > clip) sc = clip / norm;
    a->t++;
    c1 = 1 - pow(b1, (double)a->t); c2 = 1 - pow(b2, (double)a->t);
    {
        double *DP__RESTRICT m = a->m, *DP__RESTRICT v = a->v, *DP__RESTRICT wr = w, *DP__RESTRICT gr = g;
        i = 0;
#ifdef DP__VSQRT
        /* sqrt would set errno on a negative argument, so compilers keep
           the scalar loop; the vector square root is as exact */
        for (; i + DP__VW <= a->n; i += DP__VW) {
            dp__v gi = DP__LD(gr + i) * DP__SPLAT(sc);
            dp__v mi = DP__SPLAT(b1) * DP__LD(m + i) + DP__SPLAT(1 - b1) * gi;
            dp__v vi = DP__SPLAT(b2) * DP__LD(v + i) + DP__SPLAT(1 - b2) * gi * gi;
            DP__ST(m + i, mi);
            DP__ST(v + i, vi);
            DP__ST(wr + i, DP__LD(wr + i) - DP__SPLAT(lr) * (mi / DP__SPLAT(c1)) / (DP__VSQRT(vi / DP__SPLAT(c2)) + DP__SPLAT(eps)));
            DP__ST(gr + i, DP__SPLAT(0.0));
        }
#endif
        for (; i < a->n; i++) {
            double gi = gr[i] * sc;
            m[i] = b1 * m[i] + (1 - b1) * gi;
            v[i] = b2 * v[i] + (1 - b2) * gi * gi;
            wr[i] -= lr * (m[i] / c1) / (sqrt(v[i] / c2) + eps);
            gr[i] = 0;
        }
    }
}

DPDEF void dp_order_to_priority(const int *order, int n, double *prio)
{
    int k;
    for (k = 0; k < n; k++) prio[order[k]] = (double)(n - k);
}

/* The simulator's options that score a placement made in op order `order`
   (n ops): FIFO, or that order as the priority (into prio, n doubles). */
static void dp__score_opts(dp_sim_opts *so, dp_order mode, const int *order, int n, double *prio)
{
    memset(so, 0, sizeof *so);
    so->order = mode;
    so->no_xfers = 1;   /* a cost: no transfer records */
    if (mode == DP_ORDER_PRIORITY) {
        dp_order_to_priority(order, n, prio);
        so->priority = prio;
    }
}

/* The simulator's cost of assign (SEL's order in order; prio: n_ops
   doubles of scratch), as dp_train and dp_runtime_cost score it. */
static int dp__sim_cost(dp_sim *s, const int *assign, const int *order, dp_order mode, double *prio,
                        double *cost, dp_error *err)
{
    dp_sim_opts so;
    int rc;
    dp__score_opts(&so, mode, order, s->g->n_ops, prio);
    if ((rc = dp_sim_run(s, assign, &so, err))) return rc;
    *cost = s->makespan;
    return 0;
}

/* The cost of the placement in x->assign (SEL's order in x->order). */
static int dp__cost(dp__gctx *x, dp_order order, dp_cost_fn fn, void *ctx, double *cost, dp_error *err)
{
    int rc;
    if (fn && !x->overfull) return fn(ctx, x->g, x->c, x->assign, x->order, cost, err);
    /* an over-full placement (a memory dead end) is never run: its
       simulated makespan plus more than any makespan (x->pen) */
    if ((rc = dp__sim_cost(&x->sim, x->assign, x->order, order, x->prio, cost, err))) return rc;
    if (x->overfull) *cost += x->pen;
    return 0;
}

static int dp__finite(double v) { return v == v && v != HUGE_VAL && v != -HUGE_VAL; }

/* Placeto's counterparts of the two stage-independent checks: only stage
   sim (its rewards need a simulated makespan after every move). */
static int dp__train_check_placeto(const dp_train_opts *o, dp_error *err)
{
    if (o->episodes[DP_STAGE_IL]) return dp__fail(err, DP_ERR_ARG, "train: placeto has no imitation stage (il has %d episodes); use stage sim", o->episodes[DP_STAGE_IL]);
    if (o->episodes[DP_STAGE_REAL]) return dp__fail(err, DP_ERR_ARG, "train: placeto trains in the simulator only (its reward needs a makespan after every move); stage real has %d episodes", o->episodes[DP_STAGE_REAL]);
    return 0;
}

/* The best placement seen in training on one graph (x: its context). */
static void dp__keep_best(double cost, const int *assign, const int *order, int n, double *best, int *best_assign, int *best_order)
{
    if (!(cost < *best)) return;
    *best = cost;
    memcpy(best_assign, assign, sizeof(int) * (size_t)n);
    memcpy(best_order, order, sizeof(int) * (size_t)n);
}

/* The policy's own answer on the training set, for dp_train_opts.select:
   the mean over the graphs of the greedy placement's cost over the lower
   bound. Each placement also counts as found in training (tbest...). */
static int dp__greedy_score(dp__gctx *ctx, int n, const dp_policy *p, dp_order order, dp_cost_fn fn, void *cctx,
                            double *tbest, int **tb_assign, int **tb_order, double *score, long *sims, dp_error *err)
{
    dp__roll_opts ro;
    dp__roll_stats rs;
    int i, rc;
    double sum = 0, c;
    memset(&ro, 0, sizeof ro);
    ro.gamma = 1;
    for (i = 0; i < n; i++) {
        dp__gctx *x = &ctx[i];
        dp__forward(x, p);
        dp__rollout(x, p, &ro, NULL, &rs);
        if ((rc = dp__cost(x, order, fn, cctx, &c, err))) return rc;
        (*sims)++;
        if (!dp__finite(c) || c < 0) return dp__fail(err, DP_ERR_RANGE, "train: the greedy placement of graph %d costs %g, not a finite non-negative number", i, c);
        dp__keep_best(c, x->assign, x->order, x->n, &tbest[i], tb_assign[i], tb_order[i]);
        sum += c / (x->lower_bound > 0 ? x->lower_bound : 1);
    }
    *score = sum / n;
    return 0;
}

/* Model selection in a stage: the best greedy score offered so far, the
   parameters that made it (buffers of n_sel and n_plc) and the episodes
   after which they were reached. */
typedef struct dp__select { double best; double *sel, *plc; int kept; } dp__select;

static void dp__select_offer(dp__select *s, const dp_policy *p, double score, int episode)
{
    if (!(score < s->best)) return;
    s->best = score;
    s->kept = episode;
    memcpy(s->sel, p->sel, sizeof(double) * (size_t)p->n_sel);
    memcpy(s->plc, p->plc, sizeof(double) * (size_t)p->n_plc);
}

/* ---- dp_train in steps ---------------------------------------------------
   dp_train = defaults and checks (dp__train_opts_check), buffers and one
   context per graph (dp__trainer_init), then per stage (dp__train_stage)
   groups of episodes: rollouts and their costs (dp__group_rollouts), the
   returns against the baselines (dp__group_returns), each episode's loss
   (dp__group_losses), the backward pass (dp__group_backward), the update
   (dp__group_update) and the report (dp__group_report). */
typedef struct dp__trainer {
    dp_train_opts o;
    dp_policy *p;
    const dp_graph *const *graphs;
    int n, pt, K, nmax;          /* graphs; Placeto; episodes per update; largest graph */
    dp_method start;             /* Placeto's starting placement */
    dp__gctx *ctx;               /* DOPPLER, one per graph */
    dp__pctx *ptx;               /* Placeto, one per graph */
    dp__adam as, ap;
    double *gsel, *gplc, *g2, *gs;
    /* per episode of a group: cost, return, baseline, loss, entropy, stats,
       recorded choices and phi (K > 1) */
    double *kcost, *kR, *kb, *kloss, *kent, *kphi;
    dp__roll_stats *krs;
    int *kact;
    double *klp, *kadv;          /* PPO: the recorded log-probabilities and
                                    step corrections (step_lp, step_adv) */
    double cw[DP__CF], cg[DP__CF], cm[DP__CF], cv[DP__CF]; /* the critic:
                                    weights, gradient, Adam's moments   */
    dp__adam ac;
    double closs;                /* the critic's loss on the last group */
    /* the best placement found per graph */
    double *tbest;
    int **tb_assign, **tb_order, *sil_dev;
    double anchor_w;             /* the anchor's multiplier (dual ascent) */
    dp__select selected;         /* the parameters selection keeps */
    dp_train_result r;
    dp_rng rng;
    int stop;                    /* the callback or the time limit stops it */
    double deadline;             /* o.time_limit's, in dp_now seconds (0: none) */
    dp_error *err;
} dp__trainer;

/* One group of kg episodes of graph gi in stage st, from episode ep. */
typedef struct dp__group {
    int st, ep, E, kg, gi, nops, greedy, sb;
    int ppo;                     /* PPO's epochs follow the first step  */
    int crit;                    /* the critic gives b_t and is fitted  */
    double clipped;              /* PPO: share clipped, last epoch      */
    dp_cost_fn fn;
    dp__roll_opts ro;
    double gcost, gnorm, rscale, lr, lb;
    double sil_R;                /* self-imitation's return (0: none)   */
    double *baseline, *best;
    int *seen;
} dp__group;

static int dp__train_opts_check(dp_train_opts *o, int pt, dp_method *start, dp_error *err)
{
    static const double lr_def[DP_STAGE__COUNT] = { 1e-3, 5e-4, 5e-4 }, eps_def[DP_STAGE__COUNT] = { 1.0, 0.05, 0.05 };
    int rc, st;
    if (pt && (rc = dp__train_check_placeto(o, err))) return rc;
    if (pt && o->lr[DP_STAGE_SIM] == 0) o->lr[DP_STAGE_SIM] = 3e-3;
    if (pt && o->gamma == 0) o->gamma = 1;
    if (o->placeto_reinforce < 0 || o->placeto_reinforce > 1 || !dp__finite(o->placeto_tau) || o->placeto_tau < 0)
        return dp__fail(err, DP_ERR_RANGE, "train: placeto_reinforce %d (0 or 1) and placeto_tau %g (finite, not negative)", o->placeto_reinforce, o->placeto_tau);
    if (o->placeto_tau == 0) o->placeto_tau = 0.01;
    if (pt && o->start && dp_method_parse(o->start, start)) return dp__fail(err, DP_ERR_ARG, "train: unknown start method '%s'", o->start);
    if (o->rollouts < 0 || o->rollouts > 4096) return dp__fail(err, DP_ERR_RANGE, "train: rollouts %d not in 0..4096", o->rollouts);
    if (!(o->time_limit >= 0 && o->time_limit < 1e9)) return dp__fail(err, DP_ERR_RANGE, "train: time limit %g s not in [0, 1e9)", o->time_limit);
    if (o->ppo_epochs < 0 || o->ppo_epochs > 64) return dp__fail(err, DP_ERR_RANGE, "train: ppo_epochs %d not in 0..64", o->ppo_epochs);
    if (!dp__finite(o->ppo_clip) || o->ppo_clip < 0 || o->ppo_clip >= 1) return dp__fail(err, DP_ERR_RANGE, "train: ppo_clip %g not in [0, 1)", o->ppo_clip);
    if (pt && o->ppo_epochs > 1) return dp__fail(err, DP_ERR_ARG, "train: ppo_epochs %d: PPO is for DOPPLER (Placeto's updates are per step)", o->ppo_epochs);
    if (o->ppo_clip == 0) o->ppo_clip = 0.2;
    if (o->critic < 0 || o->critic > 1 || !dp__finite(o->critic_lr) || o->critic_lr < 0)
        return dp__fail(err, DP_ERR_RANGE, "train: critic %d (0 or 1) and critic_lr %g (finite, not negative)", o->critic, o->critic_lr);
    if (pt && o->critic) return dp__fail(err, DP_ERR_ARG, "train: critic: for DOPPLER (Placeto's baseline is per step of its sweep)");
    if (o->critic_lr == 0) o->critic_lr = 1e-2;
    if (!dp__finite(o->op_logits) || o->op_logits < 0 || !dp__finite(o->op_prior) || o->op_prior < 0)
        return dp__fail(err, DP_ERR_RANGE, "train: op_logits %g and op_prior %g must be finite and not negative", o->op_logits, o->op_prior);
    if (pt && o->op_logits > 0) return dp__fail(err, DP_ERR_ARG, "train: op_logits: for DOPPLER (Placeto has no per-op logits)");
    if (o->op_batch == 0) o->op_batch = 32;
    if (o->op_elite == 0) o->op_elite = 2;
    if (o->op_restart == 0) o->op_restart = DP_OP_RESTART;
    if (o->op_batch < 1 || o->op_batch > 4096 || o->op_elite < 1 || o->op_elite > o->op_batch)
        return dp__fail(err, DP_ERR_RANGE, "train: op_batch %d (1..4096) and op_elite %d (1..op_batch)", o->op_batch, o->op_elite);
    if (o->lr_final == 0) o->lr_final = 0.1;
    if (o->entropy == 0) o->entropy = 1e-3;
    if (o->entropy < 0) o->entropy = 0;
    if (!dp__finite(o->anchor) || !dp__finite(o->anchor_rate) || o->anchor_rate < 0)
        return dp__fail(err, DP_ERR_RANGE, "train: anchor %g and anchor_rate %g must be finite (the rate not negative)", o->anchor, o->anchor_rate);
    if (o->anchor == 0) o->anchor = 4;
    if (o->anchor_rate == 0) o->anchor_rate = 1e-3;
    if (o->gamma == 0) o->gamma = 1;
    if (o->step_baseline < -1 || o->step_baseline > 1) return dp__fail(err, DP_ERR_RANGE, "train: step_baseline %d not in -1..1", o->step_baseline);
    if (o->clip == 0) o->clip = 1.0;
    if (o->baseline_decay == 0) o->baseline_decay = 0.9;
    if (o->temperature == 0) o->temperature = 1;
    if (!dp__finite(o->temperature) || o->temperature < 0 || !dp__finite(o->self_imitation) || o->self_imitation < 0)
        return dp__fail(err, DP_ERR_RANGE, "train: temperature %g and self_imitation %g must be finite and not negative",
                        o->temperature, o->self_imitation);
    if (!dp__finite(o->lr_final) || o->lr_final < 0 || !dp__finite(o->entropy) || !dp__finite(o->gamma) || o->gamma < 0 ||
        !dp__finite(o->clip) || !dp__finite(o->baseline_decay) || o->baseline_decay < 0 || o->baseline_decay > 1)
        return dp__fail(err, DP_ERR_RANGE, "train: lr_final %g, entropy %g, gamma %g, clip %g, baseline_decay %g: each must be finite (and not negative; decay at most 1)",
                        o->lr_final, o->entropy, o->gamma, o->clip, o->baseline_decay);
    for (st = 0; st < DP_STAGE__COUNT; st++) {
        if (o->episodes[st] < 0) return dp__fail(err, DP_ERR_RANGE, "train: stage %s has %d episodes", dp_stage_name((dp_stage)st), o->episodes[st]);
        if (!dp__finite(o->lr[st]) || o->lr[st] < 0 || !dp__finite(o->eps_start[st]))
            return dp__fail(err, DP_ERR_RANGE, "train: stage %s: learning rate %g and exploration %g must be finite (the rate not negative)", dp_stage_name((dp_stage)st), o->lr[st], o->eps_start[st]);
        if (o->lr[st] == 0) o->lr[st] = lr_def[st];
        if (o->eps_start[st] == 0) o->eps_start[st] = eps_def[st];
        if (o->eps_start[st] < 0) o->eps_start[st] = 0;
    }
    return 0;
}

static void dp__trainer_free(dp__trainer *T)
{
    int i;
    if (T->ctx) for (i = 0; i < T->n; i++) dp__gctx_free(&T->ctx[i]);
    if (T->ptx) for (i = 0; i < T->n; i++) dp__pt_free(&T->ptx[i]);
    DP_FREE(T->ctx); DP_FREE(T->ptx); DP_FREE(T->gsel); DP_FREE(T->gplc); DP_FREE(T->g2); DP_FREE(T->gs);
    DP_FREE(T->as.m); DP_FREE(T->as.v); DP_FREE(T->ap.m); DP_FREE(T->ap.v);
    DP_FREE(T->selected.sel); DP_FREE(T->selected.plc);
    DP_FREE(T->kcost); DP_FREE(T->kR); DP_FREE(T->kb); DP_FREE(T->kloss); DP_FREE(T->kent); DP_FREE(T->krs);
    DP_FREE(T->kact); DP_FREE(T->kphi); DP_FREE(T->klp); DP_FREE(T->kadv); DP_FREE(T->tbest); DP_FREE(T->tb_assign); DP_FREE(T->tb_order); DP_FREE(T->sil_dev);
}

/* The buffers, the optimisers' moments and one episode context per graph. */
static int dp__trainer_init(dp__trainer *T, const dp_cluster *c)
{
    dp_policy *p = T->p;
    dp_error *err = T->err;
    size_t K = (size_t)T->K, nmax;
    int i, rc, n = T->n;
    for (i = 0; i < n; i++) if (T->graphs[i] && T->graphs[i]->n_ops > T->nmax) T->nmax = T->graphs[i]->n_ops;
    nmax = (size_t)T->nmax;
    if (T->pt) T->ptx = (dp__pctx *)dp__alloc((size_t)n, sizeof *T->ptx, err, "training");
    else T->ctx = (dp__gctx *)dp__alloc((size_t)n, sizeof *T->ctx, err, "training");
    T->gplc = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "gradients");
    T->ap.m = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "adam");
    T->ap.v = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "adam");
    T->ap.n = p->n_plc; T->as.n = p->n_sel;
    T->kcost = (double *)dp__alloc(K, sizeof(double), err, "training");
    T->kR = (double *)dp__alloc(K, sizeof(double), err, "training");
    T->kb = (double *)dp__alloc(K, sizeof(double), err, "training");
    T->kloss = (double *)dp__alloc(K, sizeof(double), err, "training");
    T->kent = (double *)dp__alloc(K, sizeof(double), err, "training");
    T->krs = (dp__roll_stats *)dp__alloc(K, sizeof *T->krs, err, "training");
    T->kact = (int *)dp__alloc(K > 1 || T->o.ppo_epochs > 1 ? 2 * K * nmax : 1, sizeof(int), err, "training");
    T->klp = (double *)dp__alloc(T->o.ppo_epochs > 1 ? 2 * K * nmax : 1, sizeof(double), err, "training");
    T->kadv = (double *)dp__alloc(T->o.ppo_epochs > 1 ? K * nmax : 1, sizeof(double), err, "training");
    T->kphi = (double *)dp__alloc(K > 1 ? K * nmax : 1, sizeof(double), err, "training");
    T->tbest = (double *)dp__alloc((size_t)n, sizeof(double), err, "training");
    T->tb_assign = (int **)dp__alloc((size_t)n, sizeof(int *), err, "training");
    T->tb_order = (int **)dp__alloc((size_t)n, sizeof(int *), err, "training");
    T->sil_dev = (int *)dp__alloc(nmax, sizeof(int), err, "training");
    if (!T->gplc || !T->ap.m || !T->ap.v || !T->kcost || !T->kR || !T->kb || !T->kloss || !T->kent || !T->krs ||
        !T->kact || !T->kphi || !T->klp || !T->kadv || !T->tbest || !T->tb_assign || !T->tb_order || !T->sil_dev) return DP_ERR_NOMEM;
    if (T->pt) {
        T->g2 = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "gradients");
        T->gs = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "gradients");
        if (!T->ptx || !T->g2 || !T->gs) return DP_ERR_NOMEM;
    } else {
        T->gsel = (double *)dp__alloc((size_t)p->n_sel, sizeof(double), err, "gradients");
        T->as.m = (double *)dp__alloc((size_t)p->n_sel, sizeof(double), err, "adam");
        T->as.v = (double *)dp__alloc((size_t)p->n_sel, sizeof(double), err, "adam");
        if (!T->ctx || !T->gsel || !T->as.m || !T->as.v) return DP_ERR_NOMEM;
        if (T->o.select >= 0) {
            T->selected.sel = (double *)dp__alloc((size_t)p->n_sel, sizeof(double), err, "model selection");
            T->selected.plc = (double *)dp__alloc((size_t)p->n_plc, sizeof(double), err, "model selection");
            if (!T->selected.sel || !T->selected.plc) return DP_ERR_NOMEM;
        }
    }
    for (i = 0; i < n; i++) {
        const dp_cluster *ci = T->o.clusters && T->o.clusters[i] ? T->o.clusters[i] : c;
        rc = !ci ? dp__fail(err, DP_ERR_ARG, "no cluster (c and opts.clusters[%d] are NULL)", i)
           : T->pt ? dp__pt_init(&T->ptx[i], T->graphs[i], ci, p, T->start, T->o.order, 1, err)
                   : dp__gctx_init(&T->ctx[i], T->graphs[i], ci, p->opts.hidden, p->opts.layers, p->opts.shared_gnn, 1, err);
        if (rc) {
            char pre[64];
            snprintf(pre, sizeof pre, "training graph %d: ", i);
            if (err) dp__prefix(err, pre);
            return rc;
        }
        if (T->pt) { T->ptx[i].decay = T->o.baseline_decay; T->tb_assign[i] = T->ptx[i].tb_assign; T->tb_order[i] = T->ptx[i].tb_order; }
        else { T->tb_assign[i] = T->ctx[i].best_assign; T->tb_order[i] = T->ctx[i].best_order; }
        T->tbest[i] = HUGE_VAL;
    }
    return 0;
}

/* Numerical safety: a cost, loss or gradient that is not finite stops
   training before the update, so that the policy keeps its parameters
   from the last good update. */
static int dp__train_stop(const dp__trainer *T, const dp__group *G, int e0, int e1, const char *fmt, ...)
{
    char what[200], eps[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (e0 == e1) snprintf(eps, sizeof eps, "episode %d", e0);
    else snprintf(eps, sizeof eps, "episodes %d..%d", e0, e1);
    return dp__fail(T->err, DP_ERR_RANGE, "train: stage %s, %s, graph %d: %s; stopped before its "
                    "update: the policy is as after the %ld episode%s before it",
                    dp_stage_name((dp_stage)G->st), eps, G->gi, what, T->r.episodes, T->r.episodes == 1 ? "" : "s");
}

/* The group's rollouts (Placeto: one sweep) and their costs; the greedy
   baseline's rollout first when asked for. */
static int dp__group_rollouts(dp__trainer *T, dp__group *G)
{
    dp_policy *p = T->p;
    const dp_train_opts *o = &T->o;
    int k, rc, gi = G->gi, nmax = T->nmax;
    if (T->pt) {
        dp__pctx *x = &T->ptx[gi];
        if ((rc = dp__pt_episode(x, p, &G->ro, 0, &T->rng, o->order, T->gplc, T->g2, T->gs, &T->kcost[0], &T->krs[0], T->err))) return rc;
        T->r.simulations += x->sims;
        if (x->run_best < T->tbest[gi]) dp__keep_best(x->run_best, x->best_assign, x->g->topo, x->n, &T->tbest[gi], T->tb_assign[gi], T->tb_order[gi]);
        G->baseline = &x->baseline; G->best = &x->best; G->seen = &x->seen; G->lb = x->lower_bound; G->nops = x->n;
        return 0;
    }
    dp__gctx *x = &T->ctx[gi];
    dp__forward(x, p);
    if (o->greedy_baseline && !G->ro.il) {
        /* the greedy rollout first: the sampled ones keep their records */
        dp__roll_opts rg = G->ro;
        dp__roll_stats rs;
        rg.sample = 0; rg.train = 0;
        dp__rollout(x, p, &rg, &T->rng, &rs);
        if ((rc = dp__cost(x, o->order, G->fn, o->cost_ctx, &G->gcost, T->err))) return rc;
        T->r.simulations++;
        G->greedy = 1;
        if (dp__finite(G->gcost) && G->gcost >= 0) dp__keep_best(G->gcost, x->assign, x->order, x->n, &T->tbest[gi], T->tb_assign[gi], T->tb_order[gi]);
    }
    /* the critic in the rollouts only where they are not replayed for
       the gradient (several rollouts are, with their own b) */
    if (G->crit && G->kg == 1) { G->ro.critic = T->cw; G->ro.bnorm = T->K == 1 && x->seen ? x->baseline : 0; }
    else if (G->sb && T->K == 1 && x->seen) { G->ro.bstep = x->bstep; G->ro.bnorm = x->baseline; }
    for (k = 0; k < G->kg; k++) {
        dp__rollout(x, p, &G->ro, &T->rng, &T->krs[k]);
        if ((rc = dp__cost(x, o->order, G->fn, o->cost_ctx, &T->kcost[k], T->err))) return rc;
        T->r.simulations++;
        if (!dp__finite(T->kcost[k]) || T->kcost[k] < 0) break;   /* refused by the caller */
        dp__keep_best(T->kcost[k], x->assign, x->order, x->n, &T->tbest[gi], T->tb_assign[gi], T->tb_order[gi]);
        if (G->kg > 1 || G->ppo) {
            memcpy(T->kact + 2 * (size_t)k * nmax, x->step_op, sizeof(int) * (size_t)x->n);
            memcpy(T->kact + (2 * (size_t)k + 1) * nmax, x->step_dev, sizeof(int) * (size_t)x->n);
        }
        if (G->kg > 1) memcpy(T->kphi + (size_t)k * nmax, x->phi, sizeof(double) * (size_t)x->n);
        if (G->ppo) memcpy(T->klp + 2 * (size_t)k * nmax, x->step_lp, sizeof(double) * 2 * (size_t)x->n);
        /* several rollouts get their step corrections in their replay */
        if (G->ppo && G->kg == 1) memcpy(T->kadv, x->step_adv, sizeof(double) * (size_t)x->n);
    }
    G->baseline = &x->baseline; G->best = &x->best; G->seen = &x->seen; G->lb = x->lower_bound; G->nops = x->n;
    return 0;
}

/* Baselines and returns: the baseline is the greedy rollout's cost, the
   mean of the group's other episodes (leave one out) or, with one
   episode, the graph's running mean; then self-imitation's return, the
   returns' normalisation and the running baselines' updates. */
static void dp__group_returns(dp__trainer *T, dp__group *G)
{
    const dp_train_opts *o = &T->o;
    double *kb = T->kb, *kR = T->kR, *kcost = T->kcost, *kphi = T->kphi;
    int k, kg = G->kg, nmax = T->nmax, gi = G->gi;
    for (k = 0; k < kg; k++) {
        if (G->greedy) {
            kb[k] = G->gcost;
        } else if (kg > 1) {
            double sum = 0;
            int q;
            for (q = 0; q < kg; q++) if (q != k) sum += kcost[q];
            kb[k] = sum / (kg - 1);
        } else {
            kb[k] = *G->seen ? *G->baseline : kcost[k];
        }
        kR[k] = G->ro.il || !(kb[k] > 0) ? 0 : (kb[k] - kcost[k]) / kb[k];
    }
    /* the returns' scale before any normalisation (a diagnostic): mean
       |return| over the steps, each step's own with the per-step baseline */
    for (k = 0; k < kg && !G->ro.il; k++) {
        dp__gctx *x = T->pt ? NULL : &T->ctx[gi];
        int t, q;
        if (!x || !G->sb || !(kb[k] > 0) || (kg == 1 && !G->ro.bstep)) { G->rscale += fabs(kR[k]) / kg; continue; }
        for (t = 0; t < x->n; t++) {
            double bt = 0, ph = kg > 1 ? kphi[(size_t)k * nmax + t] : x->phi[t];
            if (kg == 1) bt = G->ro.bstep[t];
            else for (q = 0; q < kg; q++) if (q != k) bt += (kcost[q] - kphi[(size_t)q * nmax + t]) / (kg - 1);
            G->rscale += fabs(kR[k] + (bt + ph - kb[k]) / kb[k]) / ((double)x->n * kg);
        }
    }
    G->sil_R = 0;
    if (!T->pt && !G->ro.il) {
        dp__gctx *x = &T->ctx[gi];
        double bm = 0;
        for (k = 0; k < kg; k++) bm += kb[k] / kg;
        /* self-imitation's return, before the returns are scaled */
        G->sil_R = o->self_imitation > 0 && T->tbest[gi] < bm && bm > 0 ? o->self_imitation * (bm - T->tbest[gi]) / bm : 0;
        if (o->adv_norm) {
            double sq = 0;
            for (k = 0; k < kg; k++) sq += kR[k] * kR[k] / kg;
            x->adv_sq = x->seen ? o->baseline_decay * x->adv_sq + (1 - o->baseline_decay) * sq : sq;
            if (x->adv_sq > 1e-30) {
                double s = 1 / sqrt(x->adv_sq);
                for (k = 0; k < kg; k++) kR[k] *= s;
                G->sil_R *= s;
            }
        }
    }
    if (G->sb && T->K == 1) {
        /* b_t, the running mean of cost - phi_t at step t */
        dp__gctx *x = &T->ctx[gi];
        int t;
        for (t = 0; t < x->n; t++)
            x->bstep[t] = x->seen ? o->baseline_decay * x->bstep[t] + (1 - o->baseline_decay) * (kcost[0] - x->phi[t]) : kcost[0] - x->phi[t];
    }
    for (k = 0; k < kg; k++) {
        *G->baseline = *G->seen ? o->baseline_decay * *G->baseline + (1 - o->baseline_decay) * kcost[k] : kcost[k];
        ++*G->seen;
    }
}

/* Each episode's loss and entropy, checked before anything is updated. */
static int dp__group_losses(dp__trainer *T, dp__group *G)
{
    int k;
    for (k = 0; k < G->kg; k++) {
        const dp__roll_stats *rs = &T->krs[k];
        if (T->pt) {
            /* the surrogate: mean over steps of -advantage x log p(move) */
            T->kloss[k] = -rs->wlogp / G->nops;
            T->kent[k] = rs->entropy / G->nops;
        } else {
            T->kloss[k] = G->ro.il ? rs->il_loss / G->nops : (rs->il_loss - T->kR[k] * rs->wlogp - rs->alogp) / G->nops;
            T->kent[k] = rs->entropy / (2.0 * G->nops);
        }
        if (!dp__finite(T->kloss[k])) return dp__train_stop(T, G, G->ep + k, G->ep + k, "loss %g is not finite", T->kloss[k]);
    }
    return 0;
}

/* DOPPLER's gradients into gsel and gplc (Placeto's episode made its own):
   one rollout's backward pass; or several replayed (same parameters,
   their recorded choices) for their records, then one encoder backward;
   and self-imitation's replay of the best placement. */
static int dp__group_backward(dp__trainer *T, dp__group *G)
{
    dp_policy *p = T->p;
    dp__gctx *x = &T->ctx[G->gi];
    dp__roll_opts rp = G->ro;
    dp__roll_stats rs;
    int k, kg = G->kg, nmax = T->nmax, gi = G->gi;
    T->closs = 0;
    /* the critic's fit to this rollout's cost (a replay below redoes it) */
    if (kg == 1 && G->ro.critic) T->closs = dp__critic_grad(x, T->cw, T->kcost[0], 1.0, T->cg);
    if (kg == 1 && !(G->sil_R > 0)) {
        dp__backward(x, p, T->kR[0], T->gsel, T->gplc);
    } else if (kg == 1) {
        dp__backward_zero(x);
        dp__backward_heads(x, p, T->kR[0], 1.0, T->gsel, T->gplc);
    } else {
        dp__backward_zero(x);
        for (k = 0; k < kg; k++) {
            rp.force_op = T->kact + 2 * (size_t)k * nmax;
            rp.force_dev = T->kact + (2 * (size_t)k + 1) * nmax;
            rp.bstep = NULL;
            if (G->crit) {
                rp.critic = T->cw; rp.bnorm = T->kb[k];
            } else if (G->sb && T->kb[k] > 0) {
                /* b_t: the other rollouts' mean of cost - phi_t */
                int t, q;
                for (t = 0; t < x->n; t++) {
                    double sum = 0;
                    for (q = 0; q < kg; q++) if (q != k) sum += T->kcost[q] - T->kphi[(size_t)q * nmax + t];
                    x->bstep[t] = sum / (kg - 1);
                }
                rp.bstep = x->bstep; rp.bnorm = T->kb[k];
            }
            dp__rollout(x, p, &rp, &T->rng, &rs);
            if (rp.critic) T->closs += dp__critic_grad(x, T->cw, T->kcost[k], 1.0 / kg, T->cg) / kg;
            if (G->ppo) memcpy(T->kadv + (size_t)k * nmax, x->step_adv, sizeof(double) * (size_t)x->n);
            /* the loss with each step's own return */
            T->kloss[k] -= rs.alogp / x->n;
            dp__backward_heads(x, p, T->kR[k], 1.0 / kg, T->gsel, T->gplc);
        }
        rp.bstep = NULL;
    }
    if (G->sil_R > 0) {
        /* self-imitation: the best placement's choices, replayed */
        int t;
        for (t = 0; t < x->n; t++) T->sil_dev[t] = T->tb_assign[gi][T->tb_order[gi][t]];
        rp.force_op = T->tb_order[gi]; rp.force_dev = T->sil_dev; rp.beta = rp.anchor = 0; rp.bstep = NULL; rp.critic = NULL;
        dp__rollout(x, p, &rp, &T->rng, &rs);
        if (!dp__finite(rs.logp)) return dp__train_stop(T, G, G->ep, G->ep + kg - 1, "self-imitation log-probability %g is not finite", rs.logp);
        dp__backward_heads(x, p, G->sil_R, 1.0, T->gsel, T->gplc);
    }
    if (kg > 1 || G->sil_R > 0) dp__backward_gnn(x, p, T->gsel, T->gplc);
    return 0;
}

/* The gradient checked, then Adam's step at the stage's decaying rate. */
static int dp__group_step(dp__trainer *T, dp__group *G)
{
    dp_policy *p = T->p;
    const dp_train_opts *o = &T->o;
    double gn = 0, frac = (double)G->ep / G->E;
    int q, bad = -1;
    G->lr = o->lr[G->st] * (1 - (1 - o->lr_final) * frac);
    for (q = 0; q < p->n_sel; q++) { gn += T->gsel[q] * T->gsel[q]; if (bad < 0 && !dp__finite(T->gsel[q])) bad = q; }
    for (q = 0; q < p->n_plc; q++) { gn += T->gplc[q] * T->gplc[q]; if (bad < 0 && !dp__finite(T->gplc[q])) bad = p->n_sel + q; }
    if (bad >= 0) return dp__train_stop(T, G, G->ep, G->ep + G->kg - 1, "gradient of parameter %d is %g", bad, bad < p->n_sel ? T->gsel[bad] : T->gplc[bad - p->n_sel]);
    if (!dp__finite(gn)) return dp__train_stop(T, G, G->ep, G->ep + G->kg - 1, "gradient norm overflows (%g)", gn);
    G->gnorm = sqrt(gn);
    if (p->n_sel) dp__adam_step(&T->as, p->sel, T->gsel, G->lr, o->clip);
    dp__adam_step(&T->ap, p->plc, T->gplc, G->lr, o->clip);
    return 0;
}

/* PPO's epochs after the update's first step: the group's episodes
   replayed under the parameters as they now are, each choice weighted by
   its probability ratio to the rollout's, clipped (dp__ppo_weight), then
   one encoder backward and a step; self-imitation's replay is the first
   step's only. */
static int dp__group_ppo(dp__trainer *T, dp__group *G)
{
    dp_policy *p = T->p;
    dp__gctx *x = &T->ctx[G->gi];
    int e, k, rc, nmax = T->nmax, clipped = 0, nch = 0;
    for (e = 1; e < T->o.ppo_epochs; e++) {
        dp__forward(x, p);
        dp__backward_zero(x);
        clipped = nch = 0;
        for (k = 0; k < G->kg; k++) {
            dp__roll_opts rp = G->ro;
            dp__roll_stats rs;
            rp.force_op = T->kact + 2 * (size_t)k * nmax;
            rp.force_dev = T->kact + (2 * (size_t)k + 1) * nmax;
            rp.old_lp = T->klp + 2 * (size_t)k * nmax;
            rp.adv_t = T->kadv + (size_t)k * nmax;
            rp.ppo_R = T->kR[k]; rp.ppo_clip = T->o.ppo_clip;
            rp.bstep = NULL; rp.critic = NULL;   /* adv_t holds the steps' corrections */
            dp__rollout(x, p, &rp, &T->rng, &rs);
            if (!dp__finite(rs.ppo_obj)) return dp__train_stop(T, G, G->ep, G->ep + G->kg - 1, "PPO epoch %d: surrogate %g is not finite", e, rs.ppo_obj);
            clipped += rs.clipped; nch += rs.nchoice;
            dp__backward_heads(x, p, T->kR[k], 1.0 / G->kg, T->gsel, T->gplc);
        }
        dp__backward_gnn(x, p, T->gsel, T->gplc);
        if ((rc = dp__group_step(T, G))) return rc;
    }
    G->clipped = nch ? (double)clipped / nch : 0;
    return 0;
}

/* The first step, PPO's epochs, and the anchor's multiplier by dual
   ascent on "distance to the expert <= X". */
static int dp__group_update(dp__trainer *T, dp__group *G)
{
    const dp_train_opts *o = &T->o;
    int k, rc;
    double g0;
    if ((rc = dp__group_step(T, G))) return rc;
    g0 = G->gnorm;   /* the report's: the first step's, on-policy */
    if (G->crit) {
        for (k = 0; k < DP__CF; k++) if (!dp__finite(T->cg[k])) return dp__train_stop(T, G, G->ep, G->ep + G->kg - 1, "critic gradient %d is %g", k, T->cg[k]);
        dp__adam_step(&T->ac, T->cw, T->cg, o->critic_lr, 0);
    }
    if (G->ppo && (rc = dp__group_ppo(T, G))) return rc;
    G->gnorm = g0;
    if (!T->pt && !G->ro.il && o->anchor > 0) {
        double xe = 0;
        for (k = 0; k < G->kg; k++) xe += T->krs[k].xent / (2.0 * G->nops * G->kg);
        T->anchor_w += o->anchor_rate * (xe - o->anchor);
        if (T->anchor_w < 0) T->anchor_w = 0;
    }
    return 0;
}

/* An episode has ended: the callback, which may stop training, then the
   time limit, which stops it once past. */
static void dp__episode_done(dp__trainer *T, const dp_episode_info *info)
{
    if (T->o.on_episode && T->o.on_episode(T->o.on_episode_ctx, info)) T->stop = 1;
    if (T->deadline > 0 && dp_now() >= T->deadline) {
        T->stop = 1;
        T->r.time_limited = DP_TIME_LIMITED;
    }
}

/* Each episode to dp__episode_done (which may stop training); the mean
   cost of the stage's last tenth into tail and ntail. */
static void dp__group_report(dp__trainer *T, const dp__group *G, double ts, double *tail, long *ntail)
{
    int k;
    for (k = 0; k < G->kg && !T->stop; k++) {
        const dp__roll_stats *rs = &T->krs[k];
        dp_episode_info info;
        memset(&info, 0, sizeof info);
        if (T->kcost[k] < *G->best) *G->best = T->kcost[k];
        T->r.episodes++;
        if (G->ep + k >= G->E - (G->E + 9) / 10) { *tail += T->kcost[k]; ++*ntail; }
        info.stage = (dp_stage)G->st; info.episode = G->ep + k; info.episodes = G->E; info.graph = G->gi;
        info.cost = T->kcost[k]; info.lower_bound = G->lb; info.best = *G->best;
        info.baseline = T->kb[k];
        info.epsilon = G->ro.eps; info.lr = G->lr;
        info.loss = T->kloss[k]; info.entropy = T->kent[k];
        info.seconds = dp_now() - ts;
        info.grad_norm = G->gnorm; info.ret_scale = G->rscale; info.anchor_weight = G->ro.anchor;
        info.ppo_clipped = G->clipped;
        info.critic_loss = G->crit ? T->closs : 0;
        if (!T->pt) {
            info.sel_entropy = rs->sel_ent / G->nops; info.plc_entropy = rs->plc_ent / G->nops;
            info.parent_share = rs->npar ? (double)rs->par / rs->npar : 0;
            info.expert_xent = rs->xent / (2.0 * G->nops);
        }
        dp__episode_done(T, &info);
    }
}

/* One group: rollouts, returns, losses, gradients, update, report. */
static int dp__train_group(dp__trainer *T, dp__group *G, double ts, double *tail, long *ntail)
{
    const dp_train_opts *o = &T->o;
    int k, rc;
    double frac = (double)G->ep / G->E;
    /* the per-step baseline: DOPPLER's REINFORCE against the running mean
       (one rollout per update) or the others' mean (several; a stage's
       last group of one rollout goes without) */
    G->sb = !T->pt && G->st != DP_STAGE_IL && !o->greedy_baseline && (o->step_baseline > 0 || (o->step_baseline == 0 && !G->fn));
    G->ppo = !T->pt && G->st != DP_STAGE_IL && o->ppo_epochs > 1;
    G->crit = G->sb && o->critic;
    memset(&G->ro, 0, sizeof G->ro);
    G->ro.sample = 1; G->ro.train = 1; G->ro.il = G->st == DP_STAGE_IL;
    G->ro.eps = o->eps_start[G->st] * (1 - frac);
    G->ro.gamma = o->gamma; G->ro.beta = o->entropy;
    if (!T->pt && !G->ro.il) G->ro.anchor = T->anchor_w;
    G->ro.temp = G->ro.il ? 1 : o->temperature;
    G->ro.improve = T->pt && !o->placeto_reinforce; G->ro.tau = o->placeto_tau;
    if ((rc = dp__group_rollouts(T, G))) return rc;
    if (G->greedy && (!dp__finite(G->gcost) || G->gcost < 0))
        return dp__train_stop(T, G, G->ep, G->ep + G->kg - 1, "the greedy baseline's cost %g is not a finite non-negative number", G->gcost);
    for (k = 0; k < G->kg; k++)
        if (!dp__finite(T->kcost[k]) || T->kcost[k] < 0)
            return dp__train_stop(T, G, G->ep + k, G->ep + k, "cost %g is not a finite non-negative number", T->kcost[k]);
    dp__group_returns(T, G);
    if ((rc = dp__group_losses(T, G))) return rc;
    if (!T->pt && (rc = dp__group_backward(T, G))) return rc;
    if ((rc = dp__group_update(T, G))) return rc;
    dp__group_report(T, G, ts, tail, ntail);
    return 0;
}

/* ---- per-op logits (dp_train_opts.op_logits) ----------------------------
   The table theta (n x D) of dp_policy.op_table: p_v = softmax(theta_v),
   the greedy placement its rows' largest (ties: the lower device). */
static const double *dp__op_table(const dp_policy *p, const dp__gctx *x)
{
    /* the hash (a pass over every edge) only where the sizes match */
    return p->op_table && p->op_n == x->n && p->op_devices == x->nd && p->op_key == dp__graph_key(x) ? p->op_table : NULL;
}

/* Each row's softmax into pr; returns the mean entropy of the rows. */
static double dp__op_probs(const double *th, int n, int nd, double *pr)
{
    double ent = 0;
    int v;
    for (v = 0; v < n; v++) ent += dp__softmax(th + (size_t)v * nd, pr + (size_t)v * nd, nd, 1);
    return n ? ent / n : 0;
}

static void dp__op_draw(const double *pr, int n, int nd, dp_rng *r, int *a)
{
    int v;
    for (v = 0; v < n; v++) a[v] = dp__choose(pr + (size_t)v * nd, nd, 1, 0, r);
}

static void dp__op_argmax(const double *th, int n, int nd, int *a)
{
    int v, d;
    for (v = 0; v < n; v++)
        for (a[v] = 0, d = 1; d < nd; d++) if (th[(size_t)v * nd + d] > th[(size_t)v * nd + a[v]]) a[v] = d;
}

/* The per-op table's placement into x->assign: each op's device drawn
   from its row pr (rng) or its row's most probable (rng NULL). Under
   memory limits the ops go in topological order, each among the devices
   where it still fits (its row renormalised over them; a dead end: the
   device with the most room, x->overfull), as PLC's mask. */
static void dp__op_place(dp__gctx *x, const double *pr, dp_rng *rng)
{
    const dp_graph *g = x->g;
    int n = x->n, nd = x->nd, i, d;
    if (!x->mlim) {
        if (rng) dp__op_draw(pr, n, nd, rng, x->assign);
        else dp__op_argmax(pr, n, nd, x->assign);
        return;
    }
    x->overfull = 0; x->deadend = -1;
    memset(x->mem.used, 0, sizeof(double) * (size_t)nd);
    memset(x->mem.held, 0, sizeof(uint64_t) * dp__mem_words(g));
    for (i = 0; i < n; i++) x->assign[i] = -1;
    for (i = 0; i < n; i++) {
        int v = g->topo[i], a = -1;
        const double *p = pr + (size_t)v * nd;
        double tot = 0, u;
        for (d = 0; d < nd; d++) {
            x->mfit[d] = (char)dp__mem_fits(&x->mem, x->assign, v, d);
            if (x->mfit[d]) tot += p[d];
        }
        for (d = 0; d < nd && a < 0; d++) if (x->mfit[d]) a = d;
        if (a < 0) a = dp__dead_end(x, v);
        else if (rng && tot > 0) {
            u = dp_rng_uniform(rng) * tot;
            for (d = 0; d < nd; d++) if (x->mfit[d]) { a = d; u -= p[d]; if (u < 0) break; }
        } else {
            for (d = 0; d < nd; d++) if (x->mfit[d] && p[d] > p[a]) a = d;
        }
        dp__mem_place(&x->mem, x->assign, v, a);
        x->assign[v] = a;
    }
}

/* The step of one episode that drew a, weighted by u: theta_v += lr u
   (onehot(a_v) - p_v), the gradient of u log P(a) w.r.t. theta_v. */
static void dp__op_step(double *th, const double *pr, const int *a, int n, int nd, double lr, double u)
{
    int v, d;
    for (v = 0; v < n; v++)
        for (d = 0; d < nd; d++) th[(size_t)v * nd + d] += lr * u * ((d == a[v]) - pr[(size_t)v * nd + d]);
}

/* A table centred on placement a: kap on each op's device, 0 elsewhere
   (the per-op stage's start and its restarts). */
static void dp__op_center(double *th, const int *a, int n, int nd, double kap)
{
    int v;
    memset(th, 0, sizeof(double) * (size_t)n * nd);
    for (v = 0; v < n; v++) th[(size_t)v * nd + a[v]] = kap;
}

/* The cross-entropy method's step on a batch of k episodes (assignments
   a, costs c): the e cheapest (ties: the earlier) weigh 1 / e - 1 / k,
   the others - 1 / k; idx: k ints of scratch. */
static void dp__op_batch_step(double *th, const double *pr, const int *a, const double *c, int k, int e, int n, int nd,
                              double lr, int *idx)
{
    int i, j;
    for (i = 0; i < k; i++) {
        int t = i;
        for (j = i; j > 0 && c[idx[j - 1]] > c[t]; j--) idx[j] = idx[j - 1];
        idx[j] = t;
    }
    if (e > k) e = k;
    for (i = 0; i < k; i++) dp__op_step(th, pr, a + (size_t)idx[i] * n, n, nd, lr, (i < e ? 1.0 / e : 0) - 1.0 / k);
}

/* A stage on the table (the network's weights stay): its start where the
   policy has none for this graph, the network's greedy SEL order for
   every episode (the runtime order under PRIORITY), then batches of
   drawn placements, their costs and the cross-entropy step; after
   op_restart batches without a new best, the table is centred on the
   best again. */
static int dp__train_stage_ops(dp__trainer *T, int st)
{
    dp_policy *p = T->p;
    const dp_train_opts *o = &T->o;
    dp__gctx *x = &T->ctx[0];
    dp_cost_fn fn = st == DP_STAGE_REAL ? o->cost : NULL;
    int n = x->n, nd = x->nd, E = o->episodes[st], K = o->op_batch, ep, k, rc = 0, *ba = NULL, *idx = NULL, stale = 0;
    double *pr = NULL, *bc = NULL, b, ts = dp_now(), tail = 0, lb = x->lower_bound, q = (nd - 1) * (n / 3.0 - 1);
    double kap = o->op_prior > 0 ? o->op_prior : q > 2.718281828459045 ? log(q) : 1;
    long ntail = 0;
    dp__group G;   /* for dp__train_stop's message */
    memset(&G, 0, sizeof G);
    G.st = st;
    if (E == 0) return 0;
    pr = (double *)dp__alloc((size_t)n * nd, sizeof(double), T->err, "per-op logits");
    ba = (int *)dp__alloc((size_t)K * n, sizeof(int), T->err, "per-op logits");
    bc = (double *)dp__alloc((size_t)K, sizeof(double), T->err, "per-op logits");
    idx = (int *)dp__alloc((size_t)K, sizeof(int), T->err, "per-op logits");
    if (!pr || !ba || !bc || !idx) { rc = DP_ERR_NOMEM; goto done; }
    if (!dp__op_table(p, x)) {
        /* the start: the network's placement, op_prior on its devices */
        dp_infer_opts io;
        double *th, m;
        long sims = 0;
        memset(&io, 0, sizeof io);
        io.samples = 64; io.seed = o->seed; io.order = o->order; io.simulations = &sims;
        if ((rc = dp_policy_place(p, x->g, x->c, &io, x->assign, x->order, &m, T->err))) goto done;
        T->r.simulations += sims;
        dp__keep_best(m, x->assign, x->order, n, &T->tbest[0], T->tb_assign[0], T->tb_order[0]);
        if (!(th = (double *)dp__alloc((size_t)n * nd, sizeof(double), T->err, "per-op logits"))) { rc = DP_ERR_NOMEM; goto done; }
        dp__op_center(th, x->assign, n, nd, kap);
        DP_FREE(p->op_table);
        p->op_table = th; p->op_n = n; p->op_devices = nd; p->op_key = dp__graph_key(x);
    }
    {
        /* the network's greedy order stays in x->order: the stage below
           changes only x->assign */
        dp__roll_opts ro;
        dp__roll_stats rs;
        memset(&ro, 0, sizeof ro);
        ro.gamma = 1;
        dp__forward(x, p);
        dp__rollout(x, p, &ro, NULL, &rs);
    }
    if (fn) T->tbest[0] = HUGE_VAL;   /* another cost: a new best */
    /* the greedy placement's cost: the best so far, and the reports'
       running mean starts there */
    dp__op_place(x, p->op_table, NULL);
    if ((rc = dp__cost(x, o->order, fn, o->cost_ctx, &b, T->err))) goto done;
    T->r.simulations++;
    if (!dp__finite(b) || b < 0) { rc = dp__train_stop(T, &G, 0, 0, "the start's cost %g is not a finite non-negative number", b); goto done; }
    dp__keep_best(b, x->assign, x->order, n, &T->tbest[0], T->tb_assign[0], T->tb_order[0]);
    for (ep = 0; ep < E && !T->stop; ep += k) {
        int kk = E - ep < K ? E - ep : K;
        double ent, best0 = T->tbest[0];
        if (o->op_restart > 0 && stale >= o->op_restart) {
            /* converged: start again around the best placement */
            dp__op_center(p->op_table, T->tb_assign[0], n, nd, kap);
            stale = 0;
        }
        ent = dp__op_probs(p->op_table, n, nd, pr);
        for (k = 0; k < kk && !T->stop; k++) {
            dp_episode_info info;
            int *a = ba + (size_t)k * n;
            dp__op_place(x, pr, &T->rng);
            memcpy(a, x->assign, sizeof(int) * (size_t)n);
            if ((rc = dp__cost(x, o->order, fn, o->cost_ctx, &bc[k], T->err))) goto done;
            T->r.simulations++;
            if (!dp__finite(bc[k]) || bc[k] < 0) { rc = dp__train_stop(T, &G, ep + k, ep + k, "cost %g is not a finite non-negative number", bc[k]); goto done; }
            dp__keep_best(bc[k], a, x->order, n, &T->tbest[0], T->tb_assign[0], T->tb_order[0]);
            memset(&info, 0, sizeof info);
            info.stage = (dp_stage)st; info.episode = ep + k; info.episodes = E; info.graph = 0;
            info.cost = bc[k]; info.lower_bound = lb; info.best = T->tbest[0]; info.baseline = b;
            info.lr = o->op_logits; info.entropy = ent; info.plc_entropy = ent;
            info.seconds = dp_now() - ts;
            b = o->baseline_decay * b + (1 - o->baseline_decay) * bc[k];
            T->r.episodes++;
            if (ep + k >= E - (E + 9) / 10) { tail += bc[k]; ntail++; }
            dp__episode_done(T, &info);
        }
        if (k == kk) dp__op_batch_step(p->op_table, pr, ba, bc, kk, o->op_elite, n, nd, o->op_logits, idx);
        stale = T->tbest[0] < best0 ? 0 : stale + 1;
    }
    /* the table kept is centred on the best placement found, as anneal
       returns its best: greedy places it, samples try around it */
    dp__op_center(p->op_table, T->tb_assign[0], n, nd, kap);
    T->r.final_cost[st] = ntail ? tail / ntail : 0;
done:
    DP_FREE(pr);
    DP_FREE(ba);
    DP_FREE(bc);
    DP_FREE(idx);
    return rc;
}

/* Stage st: groups of episodes (one graph drawn per group), and model
   selection: the greedy score of the parameters entering the stage, every
   sel episodes and at the end; the best one's parameters are kept. */
static int dp__train_stage(dp__trainer *T, int st)
{
    const dp_train_opts *o = &T->o;
    dp_policy *p = T->p;
    int E = o->episodes[st], ep, kg = 1, i, n = T->n, sel, rc;
    double ts = dp_now(), tail = 0, score;
    long ntail = 0;
    dp_cost_fn fn = st == DP_STAGE_REAL ? o->cost : NULL;
    if (!T->pt && o->op_logits > 0 && st != DP_STAGE_IL) return dp__train_stage_ops(T, st);
    if (E == 0) return 0;
    if (fn) for (i = 0; i < n; i++) T->tbest[i] = HUGE_VAL;   /* another cost: a new best */
    for (i = 0; i < n; i++) {
        if (T->pt) { T->ptx[i].seen = 0; T->ptx[i].best = HUGE_VAL; T->ptx[i].baseline = 0; }
        else { T->ctx[i].seen = 0; T->ctx[i].best = HUGE_VAL; T->ctx[i].baseline = 0; T->ctx[i].adv_sq = 0; }
    }
    sel = T->pt || st == DP_STAGE_IL || o->select < 0 ? 0 : o->select > 0 ? o->select : (E / 20 > 0 ? E / 20 : 1);
    if (sel) {
        T->selected.best = HUGE_VAL;
        if ((rc = dp__greedy_score(T->ctx, n, p, o->order, fn, o->cost_ctx, T->tbest, T->tb_assign, T->tb_order, &score, &T->r.simulations, T->err))) return rc;
        dp__select_offer(&T->selected, p, score, 0);
    }
    for (ep = 0; ep < E && !T->stop; ep += kg) {
        dp__group G;
        memset(&G, 0, sizeof G);
        G.gi = n > 1 ? dp_rng_int(&T->rng, n) : 0;
        kg = st == DP_STAGE_IL ? 1 : E - ep < T->K ? E - ep : T->K;
        G.st = st; G.ep = ep; G.E = E; G.kg = kg; G.fn = fn;
        if ((rc = dp__train_group(T, &G, ts, &tail, &ntail))) return rc;
        if (sel && !T->stop && ep + kg < E && (ep + kg) / sel > ep / sel) {
            if ((rc = dp__greedy_score(T->ctx, n, p, o->order, fn, o->cost_ctx, T->tbest, T->tb_assign, T->tb_order, &score, &T->r.simulations, T->err))) return rc;
            dp__select_offer(&T->selected, p, score, ep + kg);
        }
    }
    if (sel) {
        /* the last candidate, then the best one's parameters */
        if ((rc = dp__greedy_score(T->ctx, n, p, o->order, fn, o->cost_ctx, T->tbest, T->tb_assign, T->tb_order, &score, &T->r.simulations, T->err))) return rc;
        dp__select_offer(&T->selected, p, score, ep < E ? ep : E);
        memcpy(p->sel, T->selected.sel, sizeof(double) * (size_t)p->n_sel);
        memcpy(p->plc, T->selected.plc, sizeof(double) * (size_t)p->n_plc);
        T->r.kept[st] = T->selected.kept;
    }
    T->r.final_cost[st] = ntail ? tail / ntail : 0;
    return 0;
}

/* dp_train, its time limit counted from t_from (dp_now seconds):
   dp_policy_improve's covers its own steps too. */
static int dp__train(dp_policy *p, const dp_graph *const *graphs, int n, const dp_cluster *c,
                     const dp_train_opts *opts, double t_from, dp_train_result *res, dp_error *err)
{
    dp__trainer T;
    double t0 = dp_now();
    int rc = 0, i, st;
    memset(&T, 0, sizeof T);
    if (opts) T.o = *opts;
    for (st = 0; st < DP_STAGE__COUNT; st++) T.r.kept[st] = -1;
    T.p = p; T.graphs = graphs; T.n = n; T.err = err; T.start = DP_METHOD_CP; T.nmax = 1;
    dp__ok(err);
    if (!p || !p->plc || (p->algo != DP_ALGO_DOPPLER && p->algo != DP_ALGO_PLACETO)) return dp__fail(err, DP_ERR_ARG, "train: not an initialised policy");
    T.pt = p->algo == DP_ALGO_PLACETO;
    if (n < 1 || !graphs) return dp__fail(err, DP_ERR_ARG, "train: no graphs given");
    if ((rc = dp__train_opts_check(&T.o, T.pt, &T.start, err))) return rc;
    if (T.o.op_logits > 0 && n != 1) return dp__fail(err, DP_ERR_ARG, "train: op_logits: per-op logits belong to one graph (%d given)", n);
    T.K = T.pt || T.o.rollouts == 0 ? 1 : T.o.rollouts;   /* REINFORCE stages only */
    if (T.o.time_limit > 0) T.deadline = t_from + T.o.time_limit;
    if ((rc = dp__trainer_init(&T, c))) goto done;
    dp_rng_seed(&T.rng, T.o.seed);
    /* the critic starts at "the rest takes the unplaced work spread evenly" */
    T.cw[3] = 1;
    T.ac.m = T.cm; T.ac.v = T.cv; T.ac.n = DP__CF;
    for (st = 0; st < DP_STAGE__COUNT && !T.stop; st++)
        if ((rc = dp__train_stage(&T, st))) goto done;
    for (i = 0; i < n; i++) {
        if (T.o.best_cost) T.o.best_cost[i] = T.tbest[i];
        if (T.tbest[i] == HUGE_VAL) continue;
        if (T.o.best_assign && T.o.best_assign[i]) memcpy(T.o.best_assign[i], T.tb_assign[i], sizeof(int) * (size_t)graphs[i]->n_ops);
        if (T.o.best_order && T.o.best_order[i]) memcpy(T.o.best_order[i], T.tb_order[i], sizeof(int) * (size_t)graphs[i]->n_ops);
    }
done:
    T.r.seconds = dp_now() - t0;
    if (res) *res = T.r;
    dp__trainer_free(&T);
    return rc;
}

DPDEF int dp_train(dp_policy *p, const dp_graph *const *graphs, int n, const dp_cluster *c,
                   const dp_train_opts *opts, dp_train_result *res, dp_error *err)
{
    return dp__train(p, graphs, n, c, opts, dp_now(), res, err);
}

/* The learned placers' clock: dp_infer_opts.progress at most once a
   second, and their deadline (dp_now seconds, 0: none). */
typedef struct dp__steps {
    void  (*fn)(void *ctx, const char *step, long done, long total, double best);
    void   *ctx;
    double  next, deadline;
    int     stopped;     /* the deadline stopped a step */
} dp__steps;

static void dp__steps_init(dp__steps *k, void (*fn)(void *, const char *, long, long, double), void *ctx, double deadline)
{
    memset(k, 0, sizeof *k);
    k->fn = fn; k->ctx = ctx; k->deadline = deadline;
    if (fn) k->next = dp_now() + 1;
}

static void dp__steps_report(dp__steps *k, const char *step, long done, long total, double best)
{
    double now;
    if (!k->fn || (now = dp_now()) < k->next) return;
    k->next = now + 1;
    k->fn(k->ctx, step, done, total, best);
}

/* 1 (and k->stopped) once the deadline has passed: no more samples */
static int dp__steps_out_of_time(dp__steps *k)
{
    if (k->deadline <= 0 || dp_now() < k->deadline) return 0;
    k->stopped = 1;
    return 1;
}

/* The polish's enumopt reports through dp_place_opts.progress (its
   clock keeps it to once a second). */
static void dp__polish_report(void *ctx, long sims, long total, double best)
{
    dp__steps *k = (dp__steps *)ctx;
    (void)total;
    k->fn(k->ctx, "polish", sims, 0, best);
}

/* dp_infer_opts.polish: enumopt's passes from assign (order: its op order,
   the priority under DP_ORDER_PRIORITY), in place, until k's deadline;
   *makespan gets the result's. s: a simulator of (g, c); prio: n_ops
   doubles of scratch. */
static int dp__polish(dp_sim *s, const dp_graph *g, const dp_cluster *c, int passes, dp_order mode, const int *order,
                      double *prio, dp__steps *k, int *assign, double *makespan, long *sims, dp_error *err)
{
    dp_place_opts po;
    dp_sim_opts so;
    int rc, stopped = 0;
    long bounded = 0;   /* moves the bound refused: counted as evaluations */
    memset(&po, 0, sizeof po);
    po.max_passes = passes;
    if (k->fn) { po.progress = dp__polish_report; po.progress_ctx = k; }
    dp__score_opts(&so, mode, order, g->n_ops, prio);
    if ((rc = dp__enumopt(g, c, &po, s, &so, k->deadline, assign, sims, &bounded, &stopped, err))) return rc;
    *sims += bounded;   /* the learned placers count cost evaluations */
    if (stopped) k->stopped = 1;
    if ((rc = dp_sim_run(s, assign, &so, err))) return rc;
    ++*sims;
    *makespan = s->makespan;
    return 0;
}

/* Placeto's placement: the greedy sweep, then o->samples sampled sweeps,
   each from the starting placement; the best placement any step reached. */
static int dp__pt_place(const dp_policy *p, const dp_graph *g, const dp_cluster *c, const dp_infer_opts *o, dp__steps *clk,
                        int *assign, int *order, double *makespan, dp_error *err)
{
    dp__pctx x;
    dp__roll_opts ro;
    dp__roll_stats rs;
    dp_rng rng;
    double cost, best;
    dp_method start = DP_METHOD_CP;
    int rc, k, *keep;
    long sims = 0;
    if (o->start && dp_method_parse(o->start, &start)) return dp__fail(err, DP_ERR_ARG, "place: unknown start method '%s'", o->start);
    if ((rc = dp__pt_init(&x, g, c, p, start, o->order, 0, err))) return rc;
    if (!(keep = (int *)dp__alloc((size_t)x.n, sizeof(int), err, "placement"))) { dp__pt_free(&x); return DP_ERR_NOMEM; }
    dp_rng_seed(&rng, o->seed);
    memset(&ro, 0, sizeof ro);
    memcpy(keep, x.start, sizeof(int) * (size_t)x.n);
    best = x.m0;
    for (k = 0; k <= o->samples; k++) {
        if (k > 0 && dp__steps_out_of_time(clk)) break;
        ro.sample = k > 0;
        if ((rc = dp__pt_episode(&x, p, &ro, 0, &rng, o->order, NULL, NULL, NULL, &cost, &rs, err))) goto done;
        sims += x.sims;
        if (x.run_best < best) { best = x.run_best; memcpy(keep, x.best_assign, sizeof(int) * (size_t)x.n); }
        dp__steps_report(clk, "samples", k, o->samples, best);
    }
    if (o->polish > 0 && (rc = dp__polish(&x.sim, g, c, o->polish, o->order, g->topo, x.prio, clk, keep, &best, &sims, err))) goto done;
    if (!o->no_fallback) {
        dp_sim_opts so;
        int fell;
        dp__score_opts(&so, o->order, g->topo, x.n, x.prio);
        if ((rc = dp__single_fallback(&x.sim, g, c, &so, NULL, NULL, keep, &best, &fell, &sims, err))) goto done;
        if (o->fallback) *o->fallback = fell;
    }
    if (o->simulations) *o->simulations = x.start_sims + sims;
    memcpy(assign, keep, sizeof(int) * (size_t)x.n);
    if (order) memcpy(order, g->topo, sizeof(int) * (size_t)x.n);
    if (makespan) *makespan = best;
done:
    DP_FREE(keep);
    dp__pt_free(&x);
    return rc;
}

/* A lower bound on the simulated makespan of the last rollout's placement:
   the most work on one device (x->work, summed as the rollout placed the
   ops) and the longest path (x->pathmax: op times on their devices,
   transfers between devices, summed as the rollout placed the ops). A
   device runs one op at a time, an op starts after its inputs arrive and
   the runtime only adds waits, so no simulation of the placement ends
   earlier; the work's sums run in another order, within n ulps
   (dp_policy_place's margin is 1e-9). */
static double dp__place_bound(const dp__gctx *x)
{
    double lb = x->pathmax;
    int d;
    for (d = 0; d < x->nd; d++) if (x->work[d] > lb) lb = x->work[d];
    return lb;
}

/* An inference context w for another thread drawing samples of x's
   placement (x from dp__gctx_init with train 0, after dp__forward): x's
   graph, cluster, features, embeddings and per-edge arrays shared, read
   only; its own rollout state (dp__rollout_carve) and simulator. Freed
   by dp__gctx_free. */
static int dp__gctx_fork(dp__gctx *w, const dp__gctx *x, dp_error *err)
{
    int pass, rc;
    dp__arena ar;
    if (x->train) return dp__fail(err, DP_ERR_ARG, "place: a training context cannot be forked");
    memset(&ar, 0, sizeof ar);
    *w = *x;
    w->arena = w->larena = w->sarena = w->harena = NULL;
    memset(&w->sim, 0, sizeof w->sim);
    memset(&w->selq, 0, sizeof w->selq);   /* greedy rollouts only: not here */
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &w->arena, err, "sample workspace"))) { memset(w, 0, sizeof *w); return rc; }
        dp__rollout_carve(&ar, w);
        dp__sparse_carve(&ar, w, 0);
    }
    w->stree_live = 0;
    if ((rc = dp__sim_init_times(&w->sim, x->g, x->c, x->optime, err))) { DP_FREE(w->arena); memset(w, 0, sizeof *w); return rc; }
    return 0;
}

/* Sample k of a DOPPLER placement (k = 0: the greedy one) rolled out on
   x, from its own stream (seeded by seed and k; the greedy one by seed),
   and its simulated makespan into *cost (*sims counts it), or HUGE_VAL
   where it has none: stopped because its bound passed best (it cannot
   beat the best so far), in the rollout, before the simulation or in it
   (*sims counts that one too), or a memory dead end (x->overfull). */
static int dp__place_sample(dp__gctx *x, const dp_policy *p, uint64_t seed, dp_order order, int k, double best,
                            double *cost, long *sims, dp_error *err)
{
    dp__roll_opts ro;
    dp__roll_stats rs;
    dp_sim_opts so;
    dp_rng rng;
    int rc;
    *cost = HUGE_VAL;
    memset(&ro, 0, sizeof ro);
    ro.gamma = 1;
    ro.sample = k > 0;
    ro.stop_above = k > 0 && best < HUGE_VAL ? best * (1 + 1e-9) : 0;
    dp_rng_seed(&rng, k > 0 ? dp__mix(seed + dp__mix((uint64_t)k)) : seed);
    dp__rollout(x, p, &ro, &rng, &rs);
    if (x->overfull || rs.stopped) return 0;
    /* a sample that cannot beat the best so far is not simulated, and
       its simulation stops where its makespan must pass the best (x is
       not over-full here: dp__cost's cost is the makespan) */
    if (k > 0 && best < HUGE_VAL && dp__place_bound(x) > best * (1 + 1e-9)) return 0;
    dp__score_opts(&so, order, x->order, x->n, x->prio);
    if ((rc = dp__sim_run(&x->sim, x->assign, &so, k > 0 && best < HUGE_VAL ? best * (1 + 1e-9) : HUGE_VAL, err))) return rc;
    *cost = x->sim.makespan;
    ++*sims;
    return 0;
}

/* Samples first..last drawn by nt threads (dp_infer_opts.threads; 1: the
   calling thread alone, in order), each taking the next sample number in
   turn and rolling it out on its own context (the calling thread on x
   itself, and sample first there: the greedy placement, sample 0, needs
   x's heap, and runs while the other threads draw). Each keeps its best (the
   lowest numbered of its least makespan) and its last memory dead end;
   the best makespan so far, which stops hopeless samples early, is shared.
   Then the least makespan of all, ties to the lowest sample number (the
   order the calling thread alone would keep), becomes x's best. */
typedef struct dp__sampler {
    pthread_mutex_t mu;
    const dp_policy *p;
    const dp_infer_opts *o;
    dp__steps *clk;
    int next, last;       /* the next sample to draw, the last one */
    double best;          /* the least makespan so far, of all */
    int rc;               /* the first failure (its message in err) */
    dp_error err;
} dp__sampler;

typedef struct dp__sworker {
    dp__sampler *s;
    dp__gctx *x;          /* the context it rolls out on */
    dp__gctx own;         /* a forked one (not the calling thread's) */
    double best;          /* its least makespan, from sample best_k */
    int best_k, dead_k, dead, last_k; /* its last dead end (sample, op); its last sample */
    int own_k;            /* a sample it draws first (the calling thread's,
                             sample first), else -1 */
    long sims;
    dp_error err;
} dp__sworker;

static void *dp__sample_worker(void *arg)
{
    dp__sworker *w = (dp__sworker *)arg;
    dp__sampler *s = w->s;
    for (;;) {
        double cost, best;
        int k, rc;
        pthread_mutex_lock(&s->mu);
        if (w->own_k >= 0) {   /* its own first, whatever the clock says */
            k = w->own_k;
            w->own_k = -1;
        } else {
            if (!s->rc && s->next <= s->last) dp__steps_report(s->clk, "samples", s->next - 1, s->last, s->best);
            if (s->rc || s->next > s->last || dp__steps_out_of_time(s->clk)) { pthread_mutex_unlock(&s->mu); break; }
            k = s->next++;
        }
        best = s->best;
        pthread_mutex_unlock(&s->mu);
        rc = dp__place_sample(w->x, s->p, s->o->seed, s->o->order, k, best, &cost, &w->sims, &w->err);
        if (rc) {
            pthread_mutex_lock(&s->mu);
            if (!s->rc) { s->rc = rc; s->err = w->err; }
            pthread_mutex_unlock(&s->mu);
            break;
        }
        w->last_k = k;
        if (w->x->overfull) { w->dead_k = k; w->dead = w->x->deadend; continue; }
        if (cost < w->best) {
            w->best_k = k;
            dp__keep_best(cost, w->x->assign, w->x->order, w->x->n, &w->best, w->x->best_assign, w->x->best_order);
            pthread_mutex_lock(&s->mu);
            if (cost < s->best) s->best = cost;
            pthread_mutex_unlock(&s->mu);
        }
    }
    return NULL;
}

/* Samples first..last on nt threads (nt >= 1), x holding the best so far
   (*best, from sample *best_k; HUGE_VAL: none) and *dead the last dead
   end's op (from sample *dead_k, -1: none); all four updated, *sims
   counts the simulations. */
static int dp__place_samples(dp__gctx *x, const dp_policy *p, const dp_infer_opts *o, dp__steps *clk, int nt, int first, int last,
                                 double *best, int *best_k, int *dead, int *dead_k, long *sims, dp_error *err)
{
    dp__sampler s;
    dp__sworker *w;
    pthread_t *th;
    int i, started = 0, rc = 0, lk = -1, lw = -1;
    memset(&s, 0, sizeof s);
    s.p = p; s.o = o; s.clk = clk; s.next = first + 1; s.last = last; s.best = *best;
    w = (dp__sworker *)dp__alloc((size_t)nt, sizeof *w, err, "sample threads");
    th = (pthread_t *)dp__alloc((size_t)nt, sizeof *th, err, "sample threads");
    if (!w || !th) { DP_FREE(w); DP_FREE(th); return DP_ERR_NOMEM; }
    if (pthread_mutex_init(&s.mu, NULL) != 0) { DP_FREE(w); DP_FREE(th); return dp__fail(err, DP_ERR_NOMEM, "place: cannot make a lock for the sample threads"); }
    for (i = 0; i < nt; i++) {
        w[i].s = &s;
        w[i].best = HUGE_VAL; w[i].best_k = -1; w[i].dead_k = -1; w[i].dead = -1; w[i].last_k = -1;
        w[i].own_k = i == 0 ? first : -1;
        w[i].x = i == 0 ? x : &w[i].own;
        if (i > 0 && (rc = dp__gctx_fork(&w[i].own, x, err))) break;
    }
    if (!rc) {
        w[0].best = *best; w[0].best_k = *best_k;   /* x's best so far is the calling thread's */
        for (started = 1; started < nt; started++)
            if (pthread_create(&th[started], NULL, dp__sample_worker, &w[started]) != 0) break;
        dp__sample_worker(&w[0]);
        for (i = 1; i < started; i++) pthread_join(th[i], NULL);
        if (s.rc) { rc = s.rc; if (err) *err = s.err; }
    }
    if (!rc) {
        for (i = 0; i < nt; i++) {
            *sims += w[i].sims;
            if (w[i].best < *best || (w[i].best == *best && w[i].best < HUGE_VAL && w[i].best_k < *best_k)) {
                *best = w[i].best; *best_k = w[i].best_k;
                if (i > 0) {
                    memcpy(x->best_assign, w[i].x->best_assign, sizeof(int) * (size_t)x->n);
                    memcpy(x->best_order, w[i].x->best_order, sizeof(int) * (size_t)x->n);
                }
            }
            if (w[i].dead_k > *dead_k) {
                *dead_k = w[i].dead_k; *dead = w[i].dead;
                if (i > 0 && x->mdead) memcpy(x->mdead, w[i].x->mdead, sizeof(double) * (size_t)x->nd);
            }
            if (w[i].last_k > lk) { lk = w[i].last_k; lw = i; }
        }
        /* the last sample's order, SEL's, which scores a fallback where no
           sample had a makespan (as the calling thread alone leaves it) */
        if (lw > 0) memcpy(x->order, w[lw].x->order, sizeof(int) * (size_t)x->n);
    }
    for (i = 1; i < nt; i++) dp__gctx_free(&w[i].own);
    pthread_mutex_destroy(&s.mu);
    DP_FREE(w); DP_FREE(th);
    return rc;
}

/* dp_policy_place with its clock (progress, deadline) given: the
   deployment stage's runs on from its episodes. */
static int dp__policy_place(const dp_policy *p, const dp_graph *g, const dp_cluster *c, const dp_infer_opts *opts, dp__steps *clk,
                            int *assign, int *order, double *makespan, dp_error *err)
{
    dp__gctx x;
    dp_infer_opts o;
    dp__roll_opts ro;
    dp__roll_stats rs;
    dp_rng rng;
    double best = HUGE_VAL, cost, *pr = NULL;
    const double *th;
    int rc, k, dead = -1, dead_k = -1, best_k = -1, piped = 0;
    long sims = 0;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (o.fallback) *o.fallback = 0;
    if (!p || !p->plc) return dp__fail(err, DP_ERR_ARG, "place: policy not initialised");
    if (o.samples < 0) return dp__fail(err, DP_ERR_RANGE, "place: samples %d is negative", o.samples);
    if (o.polish < 0 || o.polish > 100) return dp__fail(err, DP_ERR_RANGE, "place: polish %d not in 0..100 passes", o.polish);
    if (o.threads < 0 || o.threads > 1024) return dp__fail(err, DP_ERR_RANGE, "place: threads %d not in 0..1024", o.threads);
    if (p->algo == DP_ALGO_PLACETO) return dp__pt_place(p, g, c, &o, clk, assign, order, makespan, err);
    if (p->algo != DP_ALGO_DOPPLER) return dp__fail(err, DP_ERR_ARG, "place: unknown policy algorithm %d", (int)p->algo);
    if ((rc = dp__gctx_init_nt(&x, g, c, p->opts.hidden, p->opts.layers, p->opts.shared_gnn, 0, o.threads, err))) return rc;
    dp_rng_seed(&rng, o.seed);
    dp__forward_sel(&x, p);
    dp__forward_plc_gnn(&x, p);
    dp__gctx_drop_scratch(&x);
    dp__forward_plc(&x, p);
    dp__gctx_drop_forward(&x);
    if ((rc = dp__gctx_sim(&x, err))) goto done;
    memset(&ro, 0, sizeof ro);
    ro.gamma = 1;
    if ((th = dp__op_table(p, &x))) {
        /* per-op logits: the network's greedy SEL order, the table's devices */
        dp__rollout(&x, p, &ro, &rng, &rs);
        if (!(pr = (double *)dp__alloc((size_t)x.n * x.nd, sizeof(double), err, "placement"))) { rc = DP_ERR_NOMEM; goto done; }
        dp__op_probs(th, x.n, x.nd, pr);
    }
    if (!th) {
        /* the greedy placement (sample 0) and the samples: sample k draws
           from its own stream, so that one stopped early leaves the others
           as they were; it stops where its bound passes the best so far
           (it cannot beat it): on any number of threads, the same answer */
        int nt = o.threads < 1 ? 1 : o.threads <= o.samples ? o.threads : o.samples + 1;
        if ((rc = dp__place_samples(&x, p, &o, clk, nt, 0, o.samples, &best, &best_k, &dead, &dead_k, &sims, err))) goto done;
    }
    for (k = 0; th && k <= o.samples; k++) {
        if (k > 0) dp__steps_report(clk, "samples", k - 1, o.samples, best);
        if (k > 0 && dp__steps_out_of_time(clk)) break;
        dp__op_place(&x, k == 0 ? th : pr, k == 0 ? NULL : &rng);
        cost = HUGE_VAL;
        if (!x.overfull) {
            if ((rc = dp__cost(&x, o.order, NULL, NULL, &cost, err))) goto done;
            sims++;
        }
        if (x.overfull) {   /* met a memory dead end: no answer */
            dead = x.deadend; dead_k = k;   /* the last one's: x.mdead is its room */
            continue;
        }
        if (cost < best) best_k = k;
        dp__keep_best(cost, x.assign, x.order, x.n, &best, x.best_assign, x.best_order);
    }
    if (best == HUGE_VAL) memcpy(x.best_order, x.order, sizeof(int) * (size_t)x.n);   /* SEL's order, for scoring */
    if (best == HUGE_VAL && x.mlim && !o.no_fallback && dp__pipeline(g, c, x.best_assign, NULL) == 0) {
        /* every placement of the policy met a dead end: pipeline's, which
           packs the devices tightest, when it fits */
        if ((rc = dp__sim_cost(&x.sim, x.best_assign, x.best_order, o.order, x.prio, &best, err))) goto done;
        sims++;
        piped = 1;
    }
    if (best < HUGE_VAL && o.polish > 0 && (rc = dp__polish(&x.sim, g, c, o.polish, o.order, x.best_order, x.prio, clk, x.best_assign, &best, &sims, err))) goto done;
    if (!o.no_fallback) {
        dp_sim_opts so;
        int fell;
        dp__score_opts(&so, o.order, x.best_order, x.n, x.prio);
        if ((rc = dp__single_fallback(&x.sim, g, c, &so, x.optime, x.assign, x.best_assign, &best, &fell, &sims, err))) goto done;
        if (o.fallback) *o.fallback = fell ? 1 : piped ? 2 : 0;
    }
    if (best == HUGE_VAL) {
        /* every placement met a dead end, and no one device holds it all:
           the last dead end's op and the devices' room then */
        char room[200];
        size_t at = 0;
        int d;
        room[0] = 0;
        for (d = 0; d < x.nd && d < 6 && at < sizeof room; d++) {
            int w = snprintf(room + at, sizeof room - at, "%s%d: %.4g of %.4g free", d ? "; " : "", d, c->memory[d] - x.mdead[d], c->memory[d]);
            if (w < 0) break;
            at += (size_t)w;
        }
        rc = dp__fail(err, DP_ERR_INFEASIBLE, "memory: in each of the policy's %d placements an op fit on no device (in the last, op '%s', node %d, with %s%s), and no device holds the whole graph: no feasible placement found",
                      o.samples + 1, dead >= 0 ? g->name[dead] : "?", dead, room, d < x.nd ? "; ..." : "");
        goto done;
    }
    if (o.simulations) *o.simulations = sims;
    memcpy(assign, x.best_assign, sizeof(int) * (size_t)x.n);
    if (order) memcpy(order, x.best_order, sizeof(int) * (size_t)x.n);
    if (makespan) *makespan = best;
done:
    DP_FREE(pr);
    dp__gctx_free(&x);
    return rc;
}

DPDEF int dp_policy_place(const dp_policy *p, const dp_graph *g, const dp_cluster *c, const dp_infer_opts *opts,
                          int *assign, int *order, double *makespan, dp_error *err)
{
    dp__steps clk;
    double t0 = dp_now(), limit = opts ? opts->time_limit : 0;
    int rc;
    if (opts && opts->time_limited) *opts->time_limited = 0;
    if (!(limit >= 0 && limit < 1e9)) return dp__fail(err, DP_ERR_RANGE, "place: time limit %g s not in [0, 1e9)", limit);
    dp__steps_init(&clk, opts ? opts->progress : NULL, opts ? opts->progress_ctx : NULL, limit > 0 ? t0 + limit : 0);
    rc = dp__policy_place(p, g, c, opts, &clk, assign, order, makespan, err);
    if (!rc && clk.stopped && opts && opts->time_limited) *opts->time_limited = DP_TIME_LIMITED;
    return rc;
}

/* The deployment stage's episodes, to dp_improve_opts.progress */
static int dp__improve_episode(void *ctx, const dp_episode_info *info)
{
    dp__steps_report((dp__steps *)ctx, "episodes", info->episode + 1, info->episodes, info->best);
    return 0;
}

/* DOPPLER's deployment stage: fine-tune a copy on g, then the best
   placement the tuning or the tuned policy reached. */
DPDEF int dp_policy_improve(const dp_policy *p, const dp_graph *g, const dp_cluster *c, const dp_improve_opts *opts,
                      int *assign, int *order, double *makespan, dp_error *err)
{
    dp_improve_opts o;
    dp_train_opts to;
    dp_infer_opts io;
    dp_policy q;
    const dp_graph *gs[1];
    int *ba = NULL, *bo = NULL, *oo = NULL, rc, fell = 0;
    double t0 = dp_now(), best = HUGE_VAL, ms = HUGE_VAL, *prio = NULL;
    dp_train_result tr;
    long sims = 0;
    dp_sim s;
    dp__steps clk;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    memset(&q, 0, sizeof q);
    memset(&s, 0, sizeof s);
    dp__ok(err);
    if (o.time_limited) *o.time_limited = 0;
    if (!p || !p->plc) return dp__fail(err, DP_ERR_ARG, "improve: policy not initialised");
    if (o.polish < 0 || o.polish > 100) return dp__fail(err, DP_ERR_RANGE, "improve: polish %d not in 0..100 passes", o.polish);
    if (!(o.time_limit >= 0 && o.time_limit < 1e9)) return dp__fail(err, DP_ERR_RANGE, "improve: time limit %g s not in [0, 1e9)", o.time_limit);
    dp__steps_init(&clk, o.progress, o.progress_ctx, o.time_limit > 0 ? t0 + o.time_limit : 0);
    if (!g || !c || !assign) return dp__fail(err, DP_ERR_ARG, "improve: graph, cluster or assignment missing");
    if (o.episodes < 0 || o.samples < 0)
        return dp__fail(err, DP_ERR_RANGE, "improve: episodes %d and samples %d must not be negative", o.episodes, o.samples);
    if (o.episodes == 0) o.episodes = 100;
    ba = (int *)dp__alloc((size_t)g->n_ops + 1, sizeof(int), err, "improve");
    bo = (int *)dp__alloc((size_t)g->n_ops + 1, sizeof(int), err, "improve");
    oo = (int *)dp__alloc((size_t)g->n_ops + 1, sizeof(int), err, "improve");
    if (!ba || !bo || !oo) { rc = DP_ERR_NOMEM; goto done; }
    if ((rc = dp_policy_init(&q, &p->opts, err))) goto done;
    if (p->n_sel) memcpy(q.sel, p->sel, sizeof(double) * (size_t)p->n_sel);
    memcpy(q.plc, p->plc, sizeof(double) * (size_t)p->n_plc);
    if (p->op_table) {
        size_t nb = (size_t)p->op_n * p->op_devices;
        if (!(q.op_table = (double *)dp__alloc(nb, sizeof(double), err, "improve"))) { rc = DP_ERR_NOMEM; goto done; }
        memcpy(q.op_table, p->op_table, sizeof(double) * nb);
        q.op_n = p->op_n; q.op_devices = p->op_devices; q.op_key = p->op_key;
    }
    memset(&to, 0, sizeof to);
    gs[0] = g;
    to.episodes[DP_STAGE_SIM] = o.episodes;
    to.op_logits = o.op_logits; to.op_prior = o.op_prior; to.op_restart = o.op_restart;
    to.order = o.order;
    to.seed = o.seed;
    to.start = o.start;
    to.best_cost = &best;
    to.best_assign = &ba;
    to.best_order = &bo;
    to.time_limit = o.time_limit;   /* from t0, as the steps below */
    if (o.progress) { to.on_episode = dp__improve_episode; to.on_episode_ctx = &clk; }
    if ((rc = dp__train(&q, gs, 1, c, &to, t0, &tr, err))) goto done;
    if (tr.time_limited) clk.stopped = 1;
    memset(&io, 0, sizeof io);
    io.simulations = &sims;
    io.samples = o.samples;
    io.threads = o.threads;
    io.seed = o.seed;
    io.order = o.order;
    io.start = o.start;
    io.fallback = &fell;
    io.no_fallback = o.no_fallback;
    rc = dp__policy_place(&q, g, c, &io, &clk, assign, oo, &ms, err);
    if (rc == DP_ERR_INFEASIBLE) ms = HUGE_VAL;   /* training may still have found one within memory */
    else if (rc) goto done;
    if (best < ms && dp__limited(c)) {
        /* an over-full episode's cost carries a penalty, but may be the
           only one: it must fit */
        double *sc = (double *)dp__alloc((size_t)c->n, sizeof(double), err, "improve");
        if (!sc) { rc = DP_ERR_NOMEM; goto done; }
        if (!dp__all_fit(g, c, ba, sc)) best = HUGE_VAL;
        DP_FREE(sc);
    }
    if (best < ms) {
        memcpy(assign, ba, sizeof(int) * (size_t)g->n_ops);
        memcpy(oo, bo, sizeof(int) * (size_t)g->n_ops);
        ms = best;
        fell = 0;
    }
    if (ms == HUGE_VAL) goto done;   /* dp_policy_place's DP_ERR_INFEASIBLE stands */
    rc = 0;
    dp__ok(err);
    if (o.polish > 0 && fell != 1) {
        prio = (double *)dp__alloc((size_t)g->n_ops + 1, sizeof(double), err, "improve");
        if (!prio) { rc = DP_ERR_NOMEM; goto done; }
        if ((rc = dp_sim_init(&s, g, c, err))) goto done;
        if ((rc = dp__polish(&s, g, c, o.polish, o.order, oo, prio, &clk, assign, &ms, &sims, err))) goto done;
    }
    if (o.fallback) *o.fallback = fell;
    if (o.time_limited && clk.stopped) *o.time_limited = DP_TIME_LIMITED;
    if (o.simulations) *o.simulations = tr.simulations + sims;
    if (order) memcpy(order, oo, sizeof(int) * (size_t)g->n_ops);
    if (makespan) *makespan = ms;
done:
    dp_policy_free(&q);
    dp_sim_free(&s);
    DP_FREE(prio);
    DP_FREE(ba);
    DP_FREE(bo);
    DP_FREE(oo);
    return rc;
}

/* "a,b,c" into at most max numbers, each finite and not negative
   (integer: a whole number up to INT_MAX); how many, or -1 when list is
   not such a list (empty, an empty item, more than max). */
static int dp__number_list(const char *list, double *out, int max, int integer)
{
    char tok[256];
    const char *p = list;
    int n = 0;
    if (!*list || strlen(list) >= sizeof tok) return -1;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *end;
        double v;
        if (len == 0 || n == max) return -1;
        memcpy(tok, p, len);
        tok[len] = 0;
        errno = 0;
        v = integer ? (double)strtol(tok, &end, 10) : strtod(tok, &end);
        if (*end || errno || !(v >= 0) || !dp__finite(v) || (integer && v > INT_MAX)) return -1;
        out[n++] = v;
        if (!comma) return n;
        p = comma + 1;
    }
}

DPDEF int dp_train_stages_parse(dp_train_opts *opts, const char *stages, const char *episodes,
                          const char *lr, dp_error *err)
{
    const char *list = stages ? stages : "il,sim", *p;
    int st[DP_STAGE__COUNT], n_st = 0, n_eps, n_lr = 0, k;
    double eps[DP_STAGE__COUNT], lrs[DP_STAGE__COUNT];
    size_t len = strlen(list);
    dp__ok(err);
    if (!opts) return dp__fail(err, DP_ERR_ARG, "stages: no training options to fill");
    if (len >= 64 || len == 0 || list[len - 1] == ',')
        return dp__fail(err, DP_ERR_PARSE, "stages: '%.400s' is not a list of il,sim,real", list);
    /* items between commas; empty ones (",il", "il,,sim") are skipped */
    for (p = list; *p; ) {
        char tok[64];
        size_t n = strcspn(p, ",");
        int s = -1;
        memcpy(tok, p, n);
        tok[n] = 0;
        p += n + (p[n] == ',');
        if (n == 0) continue;
        for (k = 0; k < DP_STAGE__COUNT; k++)
            if (!strcmp(tok, dp_stage_name((dp_stage)k))) s = k;
        if (s < 0) return dp__fail(err, DP_ERR_PARSE, "stages: unknown stage '%s' (il, sim, real)", tok);
        if (n_st && s <= st[n_st - 1])
            return dp__fail(err, DP_ERR_PARSE, "stages: '%s': stages go once each, in the order il,sim,real", list);
        st[n_st++] = s;
    }
    n_eps = n_st;
    for (k = 0; k < n_st; k++) eps[k] = 2000;
    if (episodes) {
        n_eps = dp__number_list(episodes, eps, DP_STAGE__COUNT, 1);
        if (n_eps < 0) return dp__fail(err, DP_ERR_PARSE, "episodes: '%.400s' is not a list of counts", episodes);
        if (n_eps != n_st)
            return dp__fail(err, DP_ERR_PARSE, "episodes gives %d count%s for %d stage%s", n_eps,
                            n_eps == 1 ? "" : "s", n_st, n_st == 1 ? "" : "s");
        for (k = 0; k < n_st; k++)
            if (eps[k] < 1) return dp__fail(err, DP_ERR_RANGE, "episodes: every listed stage needs at least 1");
    }
    if (lr) {
        n_lr = dp__number_list(lr, lrs, DP_STAGE__COUNT, 0);
        if (n_lr < 0) return dp__fail(err, DP_ERR_PARSE, "lr: '%.400s' is not a list of numbers", lr);
        if (n_lr != 1 && n_lr != n_st)
            return dp__fail(err, DP_ERR_PARSE, "lr gives %d rates for %d stages (give one, or one per stage)", n_lr, n_st);
        for (k = 0; k < n_lr; k++)
            if (!(lrs[k] > 0)) return dp__fail(err, DP_ERR_RANGE, "lr: rates must be positive");
    }
    for (k = 0; k < DP_STAGE__COUNT; k++) { opts->episodes[k] = 0; opts->lr[k] = 0; }
    for (k = 0; k < n_st; k++) {
        opts->episodes[st[k]] = (int)eps[k];
        if (n_lr) opts->lr[st[k]] = lrs[n_lr == 1 ? 0 : k];
    }
    return 0;
}

/* ======================================================================
   >>checkpoint
   One format for both learned placers. Little-endian: "DPPOLICY", u32
   version, u32 algo (1 doppler, 2 placeto), u32 hidden, u32 layers, u32
   shared, u32 devices (version 2 on; Placeto's device count, 0 for
   doppler), u32 insertion (version 3 on; dp_policy_opts.insertion), u32
   op features, u32 device features, u64 n_sel, u64 n_plc, f64 parameters
   (SEL then PLC), then (version 4 on, doppler) u64 op_key, u32 op_n, u32
   op_devices and f64 op_table[op_n op_devices] (per-op logits), u64
   FNV-1a of all the bytes before it. A policy is written in the oldest
   version that holds it (3 only with insertion, 4 only with per-op
   logits), so files without them read as before; version 1 (no devices
   field, doppler only) is still read.
   ====================================================================== */
#define DP__CKPT_MAGIC "DPPOLICY"
#define DP__CKPT_VERSION 4u
#define DP__N_DEVFEAT_V1 7   /* device features before the lookahead's two */
#define DP__CKPT_HEADER_V(ver) (8 + ((ver) >= 3 ? 9 : (ver) >= 2 ? 8 : 7) * 4 + 2 * 8)
#define DP__PT_N_FEAT 4   /* Placeto's op features besides the device one-hot */

static uint64_t dp__fnv(const unsigned char *b, size_t n) { return dp__fnv_add(DP__FNV_OFFSET, b, n); }

static void dp__put(unsigned char **p, uint64_t v, int bytes) { int i; for (i = 0; i < bytes; i++) *(*p)++ = (unsigned char)(v >> (8 * i)); }
static uint64_t dp__get(const unsigned char **p, int bytes) { uint64_t v = 0; int i; for (i = 0; i < bytes; i++) v |= (uint64_t)*(*p)++ << (8 * i); return v; }
/* A double as its 8 bytes (IEEE-754 bits, little-endian), both ways. */
static void dp__put_f64(unsigned char **p, double v) { uint64_t bits; memcpy(&bits, &v, 8); dp__put(p, bits, 8); }
static double dp__get_f64(const unsigned char **p) { uint64_t bits = dp__get(p, 8); double v; memcpy(&v, &bits, 8); return v; }

DPDEF int dp_policy_save(const dp_policy *p, const char *path, dp_error *err)
{
    size_t n;
    unsigned char *buf, *q;
    dp__out o;
    int rc, i;
    unsigned ver;
    if (!p || !p->plc) return dp__fail(err, DP_ERR_ARG, "save: policy not initialised");
    ver = p->op_table ? 4 : p->opts.insertion ? 3 : 2;   /* the oldest version that holds it */
    n = DP__CKPT_HEADER_V(ver) + 8 * ((size_t)p->n_sel + p->n_plc) + 8;
    if (p->op_table) n += 16 + 8 * (size_t)p->op_n * p->op_devices;
    buf = (unsigned char *)dp__alloc(n, 1, err, "checkpoint");
    if (!buf) return DP_ERR_NOMEM;
    q = buf;
    memcpy(q, DP__CKPT_MAGIC, 8); q += 8;
    dp__put(&q, ver, 4); dp__put(&q, (uint64_t)p->algo, 4);
    dp__put(&q, (uint64_t)p->opts.hidden, 4); dp__put(&q, (uint64_t)p->opts.layers, 4);
    dp__put(&q, (uint64_t)p->opts.shared_gnn, 4); dp__put(&q, (uint64_t)p->opts.devices, 4);
    if (ver >= 3) dp__put(&q, (uint64_t)p->opts.insertion, 4);
    if (p->algo == DP_ALGO_PLACETO) { dp__put(&q, DP__PT_N_FEAT, 4); dp__put(&q, 0, 4); }
    else { dp__put(&q, DP_N_FEAT, 4); dp__put(&q, DP_N_DEVFEAT, 4); }
    dp__put(&q, (uint64_t)p->n_sel, 8); dp__put(&q, (uint64_t)p->n_plc, 8);
    for (i = 0; i < p->n_sel + p->n_plc; i++) {
        double v = i < p->n_sel ? p->sel[i] : p->plc[i - p->n_sel];
        if (!dp__finite(v)) {
            DP_FREE(buf);
            return dp__fail(err, DP_ERR_RANGE, "%s: parameter %d is %g; refusing to save a policy that cannot be loaded", path, i, v);
        }
        dp__put_f64(&q, v);
    }
    if (p->op_table) {
        size_t k, nb = (size_t)p->op_n * p->op_devices;
        dp__put(&q, p->op_key, 8); dp__put(&q, (uint64_t)p->op_n, 4); dp__put(&q, (uint64_t)p->op_devices, 4);
        for (k = 0; k < nb; k++) {
            if (!dp__finite(p->op_table[k])) {
                DP_FREE(buf);
                return dp__fail(err, DP_ERR_RANGE, "%s: per-op logit %zu is %g; refusing to save a policy that cannot be loaded", path, k, p->op_table[k]);
            }
            dp__put_f64(&q, p->op_table[k]);
        }
    }
    dp__put(&q, dp__fnv(buf, (size_t)(q - buf)), 8);
    if ((rc = dp__out_open(&o, path, err))) { DP_FREE(buf); return rc; }
    if (fwrite(buf, 1, n, o.f) != n) rc = dp__fail(err, DP_ERR_IO, "%s: write error", path);
    DP_FREE(buf);
    return dp__out_close(&o, rc, err);
}

DPDEF int dp_policy_load_mem(dp_policy *p, const void *data, size_t len, const char *name, dp_error *err)
{
    const unsigned char *b = (const unsigned char *)data, *q = b;
    dp_policy_opts po;
    uint64_t ver, algo, nf, ndf, n_sel, n_plc, sum, want_nf, want_ndf, op_n = 0, op_d = 0;
    size_t hdr, body;
    int rc, i, es, ep, old_ndf, wd0 = 0, wd1 = 0;
    memset(p, 0, sizeof *p);
    if (!name) name = "<memory>";
    if (len > DP_MAX_FILE_BYTES) return dp__fail(err, DP_ERR_LIMIT, "%s: %zu bytes exceed the limit of %zu (DP_MAX_FILE_BYTES)", name, len, (size_t)DP_MAX_FILE_BYTES);
    if (len < DP__CKPT_HEADER_V(1) + 8) return dp__fail(err, DP_ERR_PARSE, "%s: truncated policy file (%zu bytes, the header alone is %d)", name, len, DP__CKPT_HEADER_V(1) + 8);
    if (memcmp(q, DP__CKPT_MAGIC, 8) != 0) return dp__fail(err, DP_ERR_PARSE, "%s: not a doppler policy file (bad magic)", name);
    q += 8;
    ver = dp__get(&q, 4);
    if (ver < 1 || ver > DP__CKPT_VERSION) return dp__fail(err, DP_ERR_PARSE, "%s: policy file version %llu, this library reads 1 to %u", name, (unsigned long long)ver, DP__CKPT_VERSION);
    hdr = DP__CKPT_HEADER_V(ver);
    if (len < hdr + 8) return dp__fail(err, DP_ERR_PARSE, "%s: truncated policy file (%zu bytes, the header alone is %zu)", name, len, hdr + 8);
    algo = dp__get(&q, 4);
    memset(&po, 0, sizeof po);
    po.hidden = (int)dp__get(&q, 4); po.layers = (int)dp__get(&q, 4); po.shared_gnn = (int)dp__get(&q, 4);
    po.devices = ver >= 2 ? (int)dp__get(&q, 4) : 0;
    po.insertion = ver >= 3 ? (int)dp__get(&q, 4) : 0;
    nf = dp__get(&q, 4); ndf = dp__get(&q, 4); n_sel = dp__get(&q, 8); n_plc = dp__get(&q, 8);
    if (algo != DP_ALGO_DOPPLER && algo != DP_ALGO_PLACETO) return dp__fail(err, DP_ERR_PARSE, "%s: unknown algorithm tag %llu", name, (unsigned long long)algo);
    po.algo = (dp_algo)algo;
    want_nf = algo == DP_ALGO_PLACETO ? DP__PT_N_FEAT : DP_N_FEAT;
    want_ndf = algo == DP_ALGO_PLACETO ? 0 : DP_N_DEVFEAT;
    /* a DOPPLER policy from before the lookahead features (7 device
       features): loaded with zero weights on the two new ones */
    old_ndf = algo == DP_ALGO_DOPPLER && ndf == DP__N_DEVFEAT_V1 ? DP_N_DEVFEAT - DP__N_DEVFEAT_V1 : 0;
    if (old_ndf) want_ndf = DP__N_DEVFEAT_V1;
    if (nf != want_nf || ndf != want_ndf) return dp__fail(err, DP_ERR_PARSE, "%s: made with %llu op and %llu device features; this library uses %llu and %llu", name, (unsigned long long)nf, (unsigned long long)ndf, (unsigned long long)want_nf, (unsigned long long)want_ndf);
    /* every declared size is checked before anything is allocated */
    if ((uint32_t)po.hidden > DP_MAX_HIDDEN || (uint32_t)po.layers > DP_MAX_LAYERS || (algo == DP_ALGO_PLACETO && (uint32_t)po.devices > DP_MAX_DEVICES))
        return dp__fail(err, DP_ERR_LIMIT, "%s: hidden %u, layers %u, devices %u: past the limits (hidden %d, layers %d, devices %d)", name,
                        (unsigned)po.hidden, (unsigned)po.layers, (unsigned)po.devices, DP_MAX_HIDDEN, DP_MAX_LAYERS, DP_MAX_DEVICES);
    if (po.hidden < 1 || po.hidden > DP_MAX_HIDDEN || po.layers < 0 || po.layers > DP_MAX_LAYERS || (po.shared_gnn != 0 && po.shared_gnn != 1))
        return dp__fail(err, DP_ERR_PARSE, "%s: bad hyperparameters (hidden %d, layers %d, shared %d)", name, po.hidden, po.layers, po.shared_gnn);
    if (algo == DP_ALGO_PLACETO ? (po.devices < 1 || po.devices > DP_MAX_DEVICES || po.shared_gnn) : po.devices != 0)
        return dp__fail(err, DP_ERR_PARSE, "%s: bad device count %d for a %s policy", name, po.devices, algo == DP_ALGO_PLACETO ? "placeto" : "doppler");
    if (po.insertion != 0 && (po.insertion != 1 || algo == DP_ALGO_PLACETO))
        return dp__fail(err, DP_ERR_PARSE, "%s: bad insertion flag %d for a %s policy (0 or 1, doppler only)", name, po.insertion, algo == DP_ALGO_PLACETO ? "placeto" : "doppler");
    dp__policy_sizes(&po, &es, &ep);
    if (old_ndf) {
        /* the file's PLC Wd (hidden x 7, after the PLC GNN) widens to hidden x 9 */
        ep -= old_ndf * po.hidden;
        wd0 = po.shared_gnn ? 0 : (int)dp__gnn_size(po.hidden, po.layers);
        wd1 = wd0 + DP__N_DEVFEAT_V1 * po.hidden;
    }
    if (n_sel != (uint64_t)es || n_plc != (uint64_t)ep) return dp__fail(err, DP_ERR_PARSE, "%s: %llu + %llu parameters, but hidden %d layers %d needs %d + %d", name, (unsigned long long)n_sel, (unsigned long long)n_plc, po.hidden, po.layers, es, ep);
    body = hdr + 8 * (size_t)(es + ep);
    if (ver >= 4) {
        /* per-op logits: their count checked against the file's length */
        const unsigned char *t = b + body + 8;
        if (algo != DP_ALGO_DOPPLER) return dp__fail(err, DP_ERR_PARSE, "%s: version %llu holds per-op logits, which a placeto policy does not have", name, (unsigned long long)ver);
        if (len < body + 16 + 8) return dp__fail(err, DP_ERR_PARSE, "%s: %zu bytes, expected at least %zu (truncated per-op logits)", name, len, body + 16 + 8);
        op_n = dp__get(&t, 4); op_d = dp__get(&t, 4);
        if (op_n < 1 || op_n > DP_MAX_OPS || op_d < 1 || op_d > DP_MAX_DEVICES)
            return dp__fail(err, DP_ERR_PARSE, "%s: per-op logits for %llu ops on %llu devices (1..%d ops, 1..%d devices)", name,
                            (unsigned long long)op_n, (unsigned long long)op_d, DP_MAX_OPS, DP_MAX_DEVICES);
        body += 16 + 8 * (size_t)(op_n * op_d);
    }
    if (len != body + 8) return dp__fail(err, DP_ERR_PARSE, "%s: %zu bytes, expected %zu (truncated or padded)", name, len, body + 8);
    {
        const unsigned char *s = b + len - 8;
        sum = dp__get(&s, 8);
        if (sum != dp__fnv(b, len - 8)) return dp__fail(err, DP_ERR_PARSE, "%s: checksum mismatch (file corrupted)", name);
    }
    if ((rc = dp__policy_alloc(p, &po, err))) return rc;
    for (i = 0; i < es + ep; i++) {
        double v = dp__get_f64(&q);
        if (!dp__finite(v)) { dp_policy_free(p); return dp__fail(err, DP_ERR_PARSE, "%s: parameter %d is not finite", name, i); }
        if (i < es) p->sel[i] = v;
        else {
            int j = i - es;   /* the file's PLC index; where it goes */
            if (j >= wd1) j += old_ndf * po.hidden;
            else if (j >= wd0) j = wd0 + (j - wd0) / DP__N_DEVFEAT_V1 * DP_N_DEVFEAT + (j - wd0) % DP__N_DEVFEAT_V1;
            p->plc[j] = v;
        }
    }
    if (ver >= 4) {
        size_t k, nb = (size_t)(op_n * op_d);
        p->op_key = dp__get(&q, 8); q += 8;   /* op_n, op_devices: read above */
        p->op_n = (int)op_n; p->op_devices = (int)op_d;
        if (!(p->op_table = (double *)dp__alloc(nb, sizeof(double), err, "per-op logits"))) { dp_policy_free(p); return DP_ERR_NOMEM; }
        for (k = 0; k < nb; k++) {
            p->op_table[k] = dp__get_f64(&q);
            if (!dp__finite(p->op_table[k])) { dp_policy_free(p); return dp__fail(err, DP_ERR_PARSE, "%s: per-op logit %zu is not finite", name, k); }
        }
    }
    return 0;
}

DPDEF int dp_policy_load(dp_policy *p, const char *path, dp_error *err)
{
    char *buf;
    size_t len;
    int rc;
    memset(p, 0, sizeof *p);
    if ((rc = dp__slurp(path, &buf, &len, err))) return rc;
    rc = dp_policy_load_mem(p, buf, len, path, err);
    DP_FREE(buf);
    return rc;
}

/* ======================================================================
   >>curves
   ====================================================================== */
DPDEF int dp_curve_svg(const char *path, const dp_episode_info *rec, int n, const char *title, dp_error *err)
{
    static const char *col[DP_STAGE__COUNT] = { "#4e79a7", "#f28e2b", "#59a14f" };
    dp__out o;
    int rc, i, W = 900, Hh = 420;
    double left = 60, right = 20, top = 40, bottom = 50, ymax = 1, ymin = 1e300, sx, sy, tick, t;
    if ((rc = dp__out_open(&o, path, err))) return rc;
    for (i = 0; i < n; i++) {
        double r = rec[i].lower_bound > 0 ? rec[i].cost / rec[i].lower_bound : rec[i].cost;
        if (r > ymax) ymax = r;
        if (r < ymin) ymin = r;
    }
    if (n == 0) ymin = 0;
    if (ymin > 1) ymin = 1;
    ymax = ymin + (ymax - ymin) * 1.05 + 1e-9;
    sx = (W - left - right) / (n > 1 ? n - 1 : 1);
    sy = (Hh - top - bottom) / (ymax - ymin);
    fprintf(o.f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, Hh);
    fprintf(o.f, "<text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">");
    dp__xml(o.f, title ? title : "training");
    fprintf(o.f, ": cost / lower bound per episode</text>\n");
    tick = dp__tick(ymax - ymin, 6);
    for (t = ceil(ymin / tick) * tick; t <= ymax; t += tick) {
        double y = Hh - bottom - (t - ymin) * sy;
        fprintf(o.f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">%.3g</text>\n", left, y, W - right, y, left - 4, y + 4, t);
    }
    /* stage boundaries and names */
    for (i = 0; i < n; i++)
        if (i == 0 || rec[i].stage != rec[i - 1].stage) {
            double x = left + i * sx;
            fprintf(o.f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#999\" stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%.0f\" fill=\"%s\">stage %s</text>\n",
                    x, top, x, Hh - bottom, x + 4, top + 12, col[rec[i].stage % DP_STAGE__COUNT], dp_stage_name(rec[i].stage));
        }
    /* one polyline per stage; points thinned to at most ~2000 */
    for (i = 0; i < n; ) {
        int s = rec[i].stage, step = n > 2000 ? n / 2000 : 1;
        fprintf(o.f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1\" points=\"", col[s % DP_STAGE__COUNT]);
        for (; i < n && (int)rec[i].stage == s; i += step) {
            double r = rec[i].lower_bound > 0 ? rec[i].cost / rec[i].lower_bound : rec[i].cost;
            fprintf(o.f, "%.1f,%.1f ", left + i * sx, Hh - bottom - (r - ymin) * sy);
        }
        while (i < n && (int)rec[i].stage == s) i++;
        fprintf(o.f, "\"/>\n");
    }
    fprintf(o.f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">episode (%d in all)</text>\n", (W + left) / 2, Hh - 15, n);
    fprintf(o.f, "</svg>\n");
    return dp__out_close(&o, 0, err);
}

DPDEF int dp_curve_csv(const char *path, const dp_episode_info *rec, int n, dp_error *err)
{
    dp__out o;
    int rc, i;
    if (n < 0 || (n > 0 && !rec)) return dp__fail(err, DP_ERR_ARG, "%s: curve of %d records", path ? path : "(no path)", n);
    if ((rc = dp__out_open(&o, path, err))) return rc;
    fprintf(o.f, "stage,episode,graph,cost,lower_bound,ratio,best,epsilon,lr,loss,entropy,seconds\n");
    for (i = 0; i < n; i++) {
        const dp_episode_info *r = &rec[i];
        double ratio = r->lower_bound > 0 ? r->cost / r->lower_bound : r->cost == 0 ? 1.0 : HUGE_VAL;
        fprintf(o.f, "%s,%d,%d,%.9g,%.9g,%.6f,%.9g,%.6f,%.6g,%.6g,%.6g,%.4f\n",
                dp_stage_name(r->stage), r->episode, r->graph, r->cost, r->lower_bound,
                ratio, r->best, r->epsilon, r->lr, r->loss, r->entropy, r->seconds);
    }
    return dp__out_close(&o, 0, err);
}

/* ======================================================================
   >>kernels
   Reference CPU semantics of the real op kinds on float32 row-major
   tensors. Inputs are taken in edge order; every sum runs in a fixed
   order, so an op's output does not depend on where it ran.
   ====================================================================== */
DPDEF int dp_graph_check_tensors(const dp_graph *g, dp_error *err)
{
    int v, k;
    for (v = 0; v < g->n_ops; v++) {
        int r = g->rows[v], c = g->cols[v], nin = g->in_off[v + 1] - g->in_off[v];
        const int *ie = g->in_edge + g->in_off[v];
        const char *nm = g->name[v];
        dp_kind kd = g->kind[v];
#define DP__IN_R(i) g->rows[g->src[ie[i]]]
#define DP__IN_C(i) g->cols[g->src[ie[i]]]
        if (kd == DP_OP_OPAQUE) continue;
        if (r == 0) return dp__fail(err, DP_ERR_GRAPH, "op '%s' (%s) has no shape", nm, dp_kind_name(kd));
        for (k = 0; k < nin; k++)
            if (!dp__is_real(g, g->src[ie[k]])) return dp__fail(err, DP_ERR_GRAPH, "op '%s' (%s) reads opaque op '%s'", nm, dp_kind_name(kd), g->name[g->src[ie[k]]]);
        switch (kd) {
        case DP_OP_INPUT:
            if (nin) return dp__fail(err, DP_ERR_GRAPH, "input op '%s' has %d inputs", nm, nin);
            break;
        case DP_OP_MATMUL:
            if (nin != 2 || DP__IN_R(0) != r || DP__IN_C(1) != c || DP__IN_C(0) != DP__IN_R(1))
                return dp__fail(err, DP_ERR_GRAPH, "matmul '%s': needs (%dxK) x (Kx%d) inputs", nm, r, c);
            break;
        case DP_OP_ADD: case DP_OP_REDUCE: case DP_OP_MUL:
            if (nin < 1 || (kd == DP_OP_MUL && nin != 2)) return dp__fail(err, DP_ERR_GRAPH, "%s '%s': %d inputs", dp_kind_name(kd), nm, nin);
            for (k = 0; k < nin; k++) if (DP__IN_R(k) != r || DP__IN_C(k) != c) return dp__fail(err, DP_ERR_GRAPH, "%s '%s': input %d is %dx%d, not %dx%d", dp_kind_name(kd), nm, k, DP__IN_R(k), DP__IN_C(k), r, c);
            break;
        case DP_OP_CONCAT: {
            int sum = 0;
            for (k = 0; k < nin; k++) { if (DP__IN_R(k) != r) return dp__fail(err, DP_ERR_GRAPH, "concat '%s': input %d has %d rows, not %d", nm, k, DP__IN_R(k), r); sum += DP__IN_C(k); }
            if (nin < 1 || sum != c) return dp__fail(err, DP_ERR_GRAPH, "concat '%s': inputs have %d columns in all, not %d", nm, sum, c);
            break;
        }
        case DP_OP_SPLIT:
            if (nin != 1 || DP__IN_R(0) != r || (long long)(g->arg[v] + 1) * c > DP__IN_C(0))
                return dp__fail(err, DP_ERR_GRAPH, "split '%s': block %d of width %d does not fit its input", nm, g->arg[v], c);
            break;
        case DP_OP_TRANSPOSE:
            if (nin != 1 || DP__IN_R(0) != c || DP__IN_C(0) != r) return dp__fail(err, DP_ERR_GRAPH, "transpose '%s': input must be %dx%d", nm, c, r);
            break;
        default:   /* unary, same shape */
            if (nin != 1 || DP__IN_R(0) != r || DP__IN_C(0) != c) return dp__fail(err, DP_ERR_GRAPH, "%s '%s': needs one %dx%d input", dp_kind_name(kd), nm, r, c);
        }
#undef DP__IN_R
#undef DP__IN_C
    }
    return 0;
}

DPDEF double dp_op_flops(dp_kind kind, int rows, int cols, int inner, int inputs)
{
    double rc = (double)rows * cols;
    switch (kind) {
    case DP_OP_OPAQUE: return 0;
    case DP_OP_MATMUL: return 2.0 * inner * rc;
    case DP_OP_ADD: case DP_OP_REDUCE: return inputs > 1 ? (inputs - 1) * rc : 0;
    case DP_OP_SILU: case DP_OP_RMSNORM: return 4 * rc;
    case DP_OP_SOFTMAX: case DP_OP_LAYERNORM: return 5 * rc;
    case DP_OP_GELU: return 8 * rc;
    default: return rc;
    }
}

/* Input tensors: uniform in [-1, 1) from (seed, op, index). */
static float dp__input_value(uint64_t seed, int op, size_t i)
{
    uint64_t z = dp__mix(seed ^ ((uint64_t)op << 32) ^ (uint64_t)i);
    return (float)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

DPDEF float dp_input_value(uint64_t seed, int op, size_t i) { return dp__input_value(seed, op, i); }

/* expf(z) with z clamped to [-87, ln FLT_MAX] and 0 below -87 (where
   expf would be subnormal or 0), computed without a branch on z; *big is
   all ones where z is past overflow (the result is then 1: the caller
   masks it).
   expf takes a slow path on underflow and overflow, and a branch
   mispredicts on mixed inputs: both made softmax and silu several times
   slower on widely spread inputs (attention scores) than on small ones. */
static float dp__exp_flush(float z, uint32_t *big)
{
    const float lo = -87.0f, hi = 88.7228393554687f;   /* ln FLT_MAX, rounded down */
    uint32_t bz, blo, b, keep, bg;
    float zc, ez;
    memcpy(&bz, &z, 4); memcpy(&blo, &lo, 4);
    keep = 0u - (uint32_t)!(z < lo);           /* masks, not branches; NaN kept */
    bg = 0u - (uint32_t)(z > hi);
    b = ((bz & keep) | (blo & ~keep)) & ~bg;   /* past overflow: expf(0), masked by the caller */
    memcpy(&zc, &b, 4);
    ez = expf(zc);
    memcpy(&b, &ez, 4);
    b &= keep;
    memcpy(&ez, &b, 4);
    *big = bg;
    return ez;
}

DPDEF float dp__round_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;   /* inf, NaN: as they are */
    u += 0x1000u;                                      /* half of the last kept bit: ties away */
    u &= 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

DPDEF float dp__round_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) u = (u | 0x00400000u) & 0xffff0000u;  /* NaN stays NaN */
    else u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;                 /* to nearest, ties to even */
    memcpy(&x, &u, 4);
    return x;
}

/* out = op(in[0..]), shapes already checked; matmuls in precision prec:
   FP32 (or DEFAULT) as they are, TF32 and BF16 with every input element
   first rounded as the tensor cores round it (dp__round_tf32, _bf16), then
   the same FP32 loop (the products of two rounded inputs are exact in
   FP32: 11 x 11 and 8 x 8 significant bits). */
static void dp__kernel_at(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed, int prec)
{
    int r = g->rows[v], c = g->cols[v], nin = g->in_off[v + 1] - g->in_off[v], i, j, k;
    const int *ie = g->in_edge + g->in_off[v];
    size_t n = (size_t)r * c, e;
    switch (g->kind[v]) {
    case DP_OP_INPUT:
        for (e = 0; e < n; e++) out[e] = dp__input_value(seed, v, e);
        break;
    case DP_OP_MATMUL: {
        /* out[i][j] = sum over k in order of a[i][k] b[k][j], from 0. Eight
           columns at a time in registers: no store in the inner loop, so
           the speed does not depend on where the buffers lie (an inner
           loop storing into out ran up to 2x slower when out and b were
           4 KiB apart: false store-to-load dependencies). RD(x) reads an
           input element: as it is (FP32), or rounded as the tensor cores
           round it (TF32, BF16; on the fly, so no buffer to allocate) */
        int K = g->cols[g->src[ie[0]]];
#define DP__MM_AS_IS(x) (x)
#define DP__MM_LOOP(RD)                                                          \
        for (i = 0; i < r; i++) {                                                \
            const float *a = in[0] + (size_t)i * K;                              \
            float *o = out + (size_t)i * c;                                      \
            for (j = 0; j + 8 <= c; j += 8) {                                    \
                float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0; \
                const float *b = in[1] + j;                                      \
                for (k = 0; k < K; k++, b += c) {                                \
                    float x = RD(a[k]);                                          \
                    s0 += x * RD(b[0]); s1 += x * RD(b[1]); s2 += x * RD(b[2]); s3 += x * RD(b[3]); \
                    s4 += x * RD(b[4]); s5 += x * RD(b[5]); s6 += x * RD(b[6]); s7 += x * RD(b[7]); \
                }                                                                \
                o[j] = s0; o[j + 1] = s1; o[j + 2] = s2; o[j + 3] = s3;          \
                o[j + 4] = s4; o[j + 5] = s5; o[j + 6] = s6; o[j + 7] = s7;      \
            }                                                                    \
            for (; j < c; j++) {                                                 \
                float s0 = 0;                                                    \
                const float *b = in[1] + j;                                      \
                for (k = 0; k < K; k++, b += c) s0 += RD(a[k]) * RD(b[0]);       \
                o[j] = s0;                                                       \
            }                                                                    \
        }
        if (prec == DP_PREC_TF32) { DP__MM_LOOP(dp__round_tf32) }
        else if (prec == DP_PREC_BF16) { DP__MM_LOOP(dp__round_bf16) }
        else { DP__MM_LOOP(DP__MM_AS_IS) }
#undef DP__MM_LOOP
#undef DP__MM_AS_IS
        break;
    }
    case DP_OP_ADD: case DP_OP_REDUCE:
        for (e = 0; e < n; e++) { float s = in[0][e]; for (k = 1; k < nin; k++) s += in[k][e]; out[e] = s; }
        break;
    case DP_OP_MUL:
        for (e = 0; e < n; e++) out[e] = in[0][e] * in[1][e];
        break;
    case DP_OP_SCALE: {
        float s = 1.0f / sqrtf((float)(g->arg[v] > 0 ? g->arg[v] : c));
        for (e = 0; e < n; e++) out[e] = in[0][e] * s;
        break;
    }
    case DP_OP_RELU:   /* x > 0 ? x : +0 (NaN -> +0), without a branch */
        for (e = 0; e < n; e++) { float x = in[0][e]; uint32_t b; memcpy(&b, &x, 4); b &= 0u - (uint32_t)(x > 0); memcpy(out + e, &b, 4); }
        break;
    case DP_OP_GELU:
        for (e = 0; e < n; e++) { float x = in[0][e]; out[e] = 0.5f * x * (1 + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }
        break;
    case DP_OP_SILU:   /* x / (1 + e^-x), e^-x by dp__exp_flush: 1 + it is 1
                          below e^-87 anyway; past overflow x / inf = -0 */
        for (e = 0; e < n; e++) {
            float x = in[0][e], y;
            uint32_t big, b;
            y = x / (1 + dp__exp_flush(-x, &big));
            memcpy(&b, &y, 4);
            b = (b & ~big) | (0x80000000u & big);   /* x < -88.72: -0 */
            memcpy(out + e, &b, 4);
        }
        break;
    case DP_OP_SOFTMAX:
        for (i = 0; i < r; i++) {
            const float *x = in[0] + (size_t)i * c;
            float *o = out + (size_t)i * c, mx = x[0], s = 0;
            for (j = 1; j < c; j++) if (x[j] > mx) mx = x[j];
            for (j = 0; j < c; j++) { uint32_t big; o[j] = dp__exp_flush(x[j] - mx, &big); s += o[j]; }
            for (j = 0; j < c; j++) o[j] /= s;
        }
        break;
    case DP_OP_RMSNORM: case DP_OP_LAYERNORM:
        for (i = 0; i < r; i++) {
            const float *x = in[0] + (size_t)i * c;
            float *o = out + (size_t)i * c, mu = 0, ss = 0;
            if (g->kind[v] == DP_OP_LAYERNORM) { for (j = 0; j < c; j++) mu += x[j]; mu /= c; }
            for (j = 0; j < c; j++) ss += (x[j] - mu) * (x[j] - mu);
            ss = 1.0f / sqrtf(ss / c + 1e-6f);
            for (j = 0; j < c; j++) o[j] = (x[j] - mu) * ss;
        }
        break;
    case DP_OP_CONCAT: {
        int off = 0;
        for (k = 0; k < nin; k++) {
            int ck = g->cols[g->src[ie[k]]];
            for (i = 0; i < r; i++) memcpy(out + (size_t)i * c + off, in[k] + (size_t)i * ck, sizeof(float) * (size_t)ck);
            off += ck;
        }
        break;
    }
    case DP_OP_SPLIT: {
        int ci = g->cols[g->src[ie[0]]], off = g->arg[v] * c;
        for (i = 0; i < r; i++) memcpy(out + (size_t)i * c, in[0] + (size_t)i * ci + off, sizeof(float) * (size_t)c);
        break;
    }
    case DP_OP_TRANSPOSE:
        for (i = 0; i < r; i++) for (j = 0; j < c; j++) out[(size_t)i * c + j] = in[0][(size_t)j * r + i];
        break;
    case DP_OP_COPY: memcpy(out, in[0], sizeof(float) * n); break;
    default: break;
    }
}

/* out = op(in[0..]) in FP32 (the tests' single kernels, the executor's
   FP32 and DEFAULT). */
static void dp__kernel(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed)
{
    dp__kernel_at(g, v, in, out, seed, DP_PREC_FP32);
}

/* ======================================================================
   >>workloads
   Block-partitioned ML workloads made of real ops (see >>api-gen).
   ====================================================================== */
typedef struct dp__wb { dp_graph *g; dp_error *err; int rc; int *wids; } dp__wb;   /* wids: the weight ops (a DP__ array) */

static int dp__wl_op(dp__wb *b, const char *name, dp_kind kind, int rows, int cols, double flops)
{
    dp_op_desc d;
    int id = -1;
    if (b->rc) return -1;
    memset(&d, 0, sizeof d);
    d.name = name; d.kind = kind; d.rows = rows; d.cols = cols;
    d.compute = flops; d.out_bytes = 4.0 * rows * cols;
    b->rc = dp_graph_add_op(b->g, &d, &id, b->err);
    return id;
}

static void dp__wl_edge(dp__wb *b, int u, int v)
{
    if (!b->rc) b->rc = dp_graph_add_edge(b->g, u, v, b->g->out_bytes[u], b->err);
}

/* C = A B in blocks: A is R x P blocks, B is P x P, C is R x P. Each
   output block is P matmuls, then a reduce of the partial products (P > 1). */
static void dp__wl_blockmm(dp__wb *b, const char *tag, int R, int P, const int *A, const int *B, int *C)
{
    int i, j, k;
    char nm[64];
    if (b->rc) return;
    for (i = 0; i < R; i++)
        for (j = 0; j < P; j++) {
            int part[8], r = b->g->rows[A[i * P]], c = b->g->cols[B[j]], kk = b->g->cols[A[i * P]];
            for (k = 0; k < P; k++) {
                snprintf(nm, sizeof nm, "%s_mm%d%d_%d", tag, i, j, k);
                part[k] = dp__wl_op(b, nm, DP_OP_MATMUL, r, c, 2.0 * r * kk * c);
                dp__wl_edge(b, A[i * P + k], part[k]);
                dp__wl_edge(b, B[k * P + j], part[k]);
            }
            if (P == 1) { C[i * P + j] = part[0]; continue; }
            snprintf(nm, sizeof nm, "%s_sum%d%d", tag, i, j);
            C[i * P + j] = dp__wl_op(b, nm, DP_OP_REDUCE, r, c, (double)(P - 1) * r * c);
            for (k = 0; k < P; k++) dp__wl_edge(b, part[k], C[i * P + j]);
        }
}

/* An op of `kind` on one input. */
static int dp__wl_unary(dp__wb *b, const char *name, dp_kind kind, int in, int rows, int cols, int arg, double flops)
{
    int v = dp__wl_op(b, name, kind, rows, cols, flops);
    if (!b->rc) b->g->arg[v] = arg;
    dp__wl_edge(b, in, v);
    return v;
}

/* A weight matrix: an input op, listed in b->wids (the weights mode
   turns it into a graph weight). */
static int dp__wl_weight(dp__wb *b, const char *name, int rows, int cols)
{
    int v = dp__wl_op(b, name, DP_OP_INPUT, rows, cols, (double)rows * cols);
    if (!b->rc && DP__PUSH(b->wids, v)) b->rc = dp__fail(b->err, DP_ERR_NOMEM, "workload: out of memory listing the weights");
    return v;
}

/* A norm (rmsnorm or layernorm) over whole rows of P column blocks:
   concat, normalise, split. */
static void dp__wl_norm(dp__wb *b, dp_kind kind, const char *tag, int P, int rows, int blk, const int *x, int *y)
{
    char nm[64];
    int j, cat, nrm;
    snprintf(nm, sizeof nm, "%s_cat", tag);
    cat = dp__wl_op(b, nm, DP_OP_CONCAT, rows, blk * P, (double)rows * blk * P);
    for (j = 0; j < P; j++) dp__wl_edge(b, x[j], cat);
    snprintf(nm, sizeof nm, "%s_norm", tag);
    nrm = dp__wl_unary(b, nm, kind, cat, rows, blk * P, 0, dp_op_flops(kind, rows, blk * P, 0, 1));
    for (j = 0; j < P; j++) {
        snprintf(nm, sizeof nm, "%s_part%d", tag, j);
        y[j] = dp__wl_unary(b, nm, DP_OP_SPLIT, nrm, rows, blk, j, (double)rows * blk);
    }
}

/* A block's weight matrices, names[0..count): each P x P blocks of blk x
   blk, named "<pre><layer>_<name>_<i><j>", into W (count P^2 ints). */
static void dp__wl_weight_blocks(dp__wb *b, char pre, int layer, const char *const *names, int count, int P, int blk, int *W)
{
    char nm[64];
    int w, j;
    for (w = 0; w < count; w++)
        for (j = 0; j < P * P; j++) {
            snprintf(nm, sizeof nm, "%c%d_%s_%d%d", pre, layer, names[w], j / P, j % P);
            W[w * P * P + j] = dp__wl_weight(b, nm, blk, blk);
        }
}

/* A block's attention and its residual, x += attention(y): Q, K, V block
   matmuls of y (P column blocks of B x blk), P heads (K transposed,
   scores, scale, softmax, the weighted sum of V), the output projection
   and the residual adds; W: the P x P blocks of Wq, Wk, Wv, Wo in turn;
   ops named "<pre><layer>_...". t2, t3: P ints of scratch each. */
static void dp__wl_attention(dp__wb *b, char pre, int layer, int P, int B, int blk, const int *y, const int *W, int *x, int *t2, int *t3)
{
    char nm[64], tag[32];
    int j, h, q[8], k[8], vv[8];
    snprintf(tag, sizeof tag, "%c%d_q", pre, layer); dp__wl_blockmm(b, tag, 1, P, y, W + 0 * P * P, q);
    snprintf(tag, sizeof tag, "%c%d_k", pre, layer); dp__wl_blockmm(b, tag, 1, P, y, W + 1 * P * P, k);
    snprintf(tag, sizeof tag, "%c%d_v", pre, layer); dp__wl_blockmm(b, tag, 1, P, y, W + 2 * P * P, vv);
    for (h = 0; h < P; h++) {
        int kt, sc, ss, sm;
        snprintf(nm, sizeof nm, "%c%d_h%d_kT", pre, layer, h);
        kt = dp__wl_unary(b, nm, DP_OP_TRANSPOSE, k[h], blk, B, 0, (double)B * blk);
        snprintf(nm, sizeof nm, "%c%d_h%d_scores", pre, layer, h);
        sc = dp__wl_op(b, nm, DP_OP_MATMUL, B, B, 2.0 * B * blk * B);
        dp__wl_edge(b, q[h], sc); dp__wl_edge(b, kt, sc);
        snprintf(nm, sizeof nm, "%c%d_h%d_scale", pre, layer, h);
        ss = dp__wl_unary(b, nm, DP_OP_SCALE, sc, B, B, blk, (double)B * B);
        snprintf(nm, sizeof nm, "%c%d_h%d_softmax", pre, layer, h);
        sm = dp__wl_unary(b, nm, DP_OP_SOFTMAX, ss, B, B, 0, 5.0 * B * B);
        snprintf(nm, sizeof nm, "%c%d_h%d_out", pre, layer, h);
        t2[h] = dp__wl_op(b, nm, DP_OP_MATMUL, B, blk, 2.0 * B * B * blk);
        dp__wl_edge(b, sm, t2[h]); dp__wl_edge(b, vv[h], t2[h]);
    }
    snprintf(tag, sizeof tag, "%c%d_o", pre, layer); dp__wl_blockmm(b, tag, 1, P, t2, W + 3 * P * P, t3);
    for (j = 0; j < P; j++) {
        snprintf(nm, sizeof nm, "%c%d_res1_%d", pre, layer, j);
        t2[j] = dp__wl_op(b, nm, DP_OP_ADD, B, blk, (double)B * blk);
        dp__wl_edge(b, x[j], t2[j]); dp__wl_edge(b, t3[j], t2[j]);
        x[j] = t2[j];
    }
}

/* One Llama-style block on x (P column blocks of batch x blk): attention
   with P heads (one per block) and a gated MLP, both with residuals. */
static void dp__wl_llama(dp__wb *b, int layer, int P, int B, int blk, int *x, int *W, int *t1, int *t2, int *t3)
{
    char nm[64], tag[32];
    int j;
    const char *wn[7] = { "Wq", "Wk", "Wv", "Wo", "W1", "W3", "W2" };
    dp__wl_weight_blocks(b, 'L', layer, wn, 7, P, blk, W);
    snprintf(tag, sizeof tag, "L%d_attn", layer);
    dp__wl_norm(b, DP_OP_RMSNORM, tag, P, B, blk, x, t1);
    dp__wl_attention(b, 'L', layer, P, B, blk, t1, W, x, t2, t3);
    snprintf(tag, sizeof tag, "L%d_mlp", layer);
    dp__wl_norm(b, DP_OP_RMSNORM, tag, P, B, blk, x, t1);
    snprintf(tag, sizeof tag, "L%d_gate", layer); dp__wl_blockmm(b, tag, 1, P, t1, W + 4 * P * P, t2);
    snprintf(tag, sizeof tag, "L%d_up", layer); dp__wl_blockmm(b, tag, 1, P, t1, W + 5 * P * P, t3);
    for (j = 0; j < P; j++) {
        int sl, ml;
        snprintf(nm, sizeof nm, "L%d_silu%d", layer, j);
        sl = dp__wl_unary(b, nm, DP_OP_SILU, t2[j], B, blk, 0, 4.0 * B * blk);
        snprintf(nm, sizeof nm, "L%d_glu%d", layer, j);
        ml = dp__wl_op(b, nm, DP_OP_MUL, B, blk, (double)B * blk);
        dp__wl_edge(b, sl, ml); dp__wl_edge(b, t3[j], ml);
        t1[j] = ml;
    }
    snprintf(tag, sizeof tag, "L%d_down", layer); dp__wl_blockmm(b, tag, 1, P, t1, W + 6 * P * P, t3);
    for (j = 0; j < P; j++) {
        snprintf(nm, sizeof nm, "L%d_res2_%d", layer, j);
        t2[j] = dp__wl_op(b, nm, DP_OP_ADD, B, blk, (double)B * blk);
        dp__wl_edge(b, x[j], t2[j]); dp__wl_edge(b, t3[j], t2[j]);
        x[j] = t2[j];
    }
}

/* One GPT-2-style block on x (P column blocks of batch x blk): layernorm,
   Q/K/V, P heads, output projection, residual; layernorm, an MLP 4 dim
   wide in four chunks (x W1_c, gelu, times W2_c; the chunks' products
   summed), residual. t1..t3: P ints of scratch each, mm: 4 P more. */
static void dp__wl_gpt(dp__wb *b, int layer, int P, int B, int blk, int *x, int *t1, int *t2, int *t3, int *mm)
{
    char nm[64], tag[32];
    int j, ch, W[4 * 64];
    const char *wn[4] = { "Wq", "Wk", "Wv", "Wo" };
    dp__wl_weight_blocks(b, 'G', layer, wn, 4, P, blk, W);
    snprintf(tag, sizeof tag, "G%d_ln1", layer);
    dp__wl_norm(b, DP_OP_LAYERNORM, tag, P, B, blk, x, t1);
    dp__wl_attention(b, 'G', layer, P, B, blk, t1, W, x, t2, t3);
    snprintf(tag, sizeof tag, "G%d_ln2", layer);
    dp__wl_norm(b, DP_OP_LAYERNORM, tag, P, B, blk, x, t1);
    for (ch = 0; ch < 4; ch++) {
        int W1[64], W2[64];
        for (j = 0; j < P * P; j++) {
            snprintf(nm, sizeof nm, "G%d_W1c%d_%d%d", layer, ch, j / P, j % P);
            W1[j] = dp__wl_weight(b, nm, blk, blk);
            snprintf(nm, sizeof nm, "G%d_W2c%d_%d%d", layer, ch, j / P, j % P);
            W2[j] = dp__wl_weight(b, nm, blk, blk);
        }
        snprintf(tag, sizeof tag, "G%d_fc%d", layer, ch); dp__wl_blockmm(b, tag, 1, P, t1, W1, t2);
        for (j = 0; j < P; j++) {
            snprintf(nm, sizeof nm, "G%d_gelu%d_%d", layer, ch, j);
            t2[j] = dp__wl_unary(b, nm, DP_OP_GELU, t2[j], B, blk, 0, 8.0 * B * blk);
        }
        snprintf(tag, sizeof tag, "G%d_proj%d", layer, ch); dp__wl_blockmm(b, tag, 1, P, t2, W2, mm + ch * P);
    }
    for (j = 0; j < P; j++) {
        snprintf(nm, sizeof nm, "G%d_res2_%d", layer, j);
        t3[j] = dp__wl_op(b, nm, DP_OP_ADD, B, blk, 4.0 * B * blk);
        dp__wl_edge(b, x[j], t3[j]);
        for (ch = 0; ch < 4; ch++) dp__wl_edge(b, mm[ch * P + j], t3[j]);
        x[j] = t3[j];
    }
}

/* The weights mode: every weight op (wids) becomes a graph weight of its
   bytes, used by the ops that read it (its edges dropped); every other op
   an opaque op of the same name, FLOPs and bytes; g is replaced. */
static int dp__wl_fold_weights(dp_graph *g, const int *wids, int nw, dp_error *err)
{
    dp_graph h;
    int *map = (int *)dp__alloc((size_t)g->n_ops, sizeof(int), err, "workload"), v, e, i, rc = 0;
    if (!map) return DP_ERR_NOMEM;
    dp_graph_init(&h);
    h.unit_speed = g->unit_speed; h.unit_bandwidth = g->unit_bandwidth;
    for (v = 0; v < g->n_ops; v++) map[v] = 0;
    for (i = 0; i < nw && !rc; i++) {   /* weight w: map -1 - w */
        int w;
        rc = dp_graph_add_weight(&h, g->name[wids[i]], g->out_bytes[wids[i]], &w, err);
        map[wids[i]] = -1 - w;
    }
    for (v = 0; v < g->n_ops && !rc; v++) {
        dp_op_desc d;
        if (map[v] < 0) continue;
        memset(&d, 0, sizeof d);
        d.name = g->name[v]; d.compute = g->compute[v]; d.out_bytes = g->out_bytes[v]; d.mem_bytes = g->mem_bytes[v];
        rc = dp_graph_add_op(&h, &d, &map[v], err);
    }
    for (e = 0; e < g->n_edges && !rc; e++) {
        int u = g->src[e], x = g->dst[e];
        rc = map[u] < 0 ? dp_graph_use_weight(&h, map[x], -1 - map[u], err) : dp_graph_add_edge(&h, map[u], map[x], g->bytes[e], err);
    }
    if (!rc) rc = dp_graph_finalize(&h, err);
    DP_FREE(map);
    if (rc) { dp_graph_free(&h); return rc; }
    dp_graph_free(g);
    *g = h;
    return 0;
}

static const char *const dp__wl_names[] = { "chainmm", "ffnn", "llama-block", "llama-layer", "gpt" };

DPDEF int dp_workload_parse(const char *name, dp_workload *out)
{
    int i = dp__name_index(dp__wl_names, 5, name);
    if (i >= 0) *out = (dp_workload)i;
    return i < 0 ? -1 : 0;
}

DPDEF int dp_gen_workload(dp_graph *g, const dp_workload_opts *opts, dp_error *err)
{
    dp_workload_opts o;
    dp__wb b;
    int P, blk, l, i, j, *A = NULL, *B = NULL, *C = NULL;
    char nm[64];
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    dp_graph_init(g);
    if (o.parts == 0) o.parts = 2;
    if (o.dim == 0) o.dim = 256;
    if (o.batch == 0) o.batch = 64;
    if (o.layers == 0) o.layers = 3;
    P = o.parts;
    if (P < 1 || P > 8) return dp__fail(err, DP_ERR_RANGE, "workload: parts %d not in 1..8", P);
    if (o.dim < P || o.dim % P || o.dim > 8192) return dp__fail(err, DP_ERR_RANGE, "workload: dim %d must be a multiple of parts %d, at most 8192", o.dim, P);
    if (o.batch < 1 || o.batch > 8192) return dp__fail(err, DP_ERR_RANGE, "workload: batch %d not in 1..8192", o.batch);
    if (o.layers < 1 || o.layers > 64) return dp__fail(err, DP_ERR_RANGE, "workload: layers %d not in 1..64", o.layers);
    if ((int)o.kind < 0 || o.kind > DP_WL_GPT) return dp__fail(err, DP_ERR_ARG, "workload: unknown kind %d", (int)o.kind);
    if (o.vocab == 0) o.vocab = 8 * o.dim;
    if (o.vocab < P || o.vocab % P || o.vocab > (1 << 20) || (double)(o.dim / P) * (o.vocab / P) > (double)(1 << 28))
        return dp__fail(err, DP_ERR_RANGE, "workload: vocab %d must be a multiple of parts %d, at most 2^20 (and dim / parts x vocab / parts at most 2^28)", o.vocab, P);
    blk = o.dim / P;
    b.g = g; b.err = err; b.rc = 0; b.wids = NULL;
    /* the cost units: FLOPs at 1e9 per second, bytes at 1e10 per second */
    g->unit_speed = 1e9; g->unit_bandwidth = 1e10;
    A = (int *)dp__alloc((size_t)P * P, sizeof(int), err, "workload");
    B = (int *)dp__alloc((size_t)P * P * 7, sizeof(int), err, "workload");
    C = (int *)dp__alloc((size_t)P * P * 3, sizeof(int), err, "workload");
    if (!A || !B || !C) { b.rc = DP_ERR_NOMEM; goto done; }
    if (o.kind == DP_WL_GPT) {
        /* embedded tokens (the lookup: an input per block), the blocks, a
           final layernorm and the head: P column blocks of vocab / P, each
           the sum over the P row blocks of x_k W_kj */
        int *mm = (int *)dp__alloc((size_t)4 * P, sizeof(int), err, "workload"), V = o.vocab / P;
        if (!mm) { b.rc = DP_ERR_NOMEM; goto done; }
        for (j = 0; j < P; j++) { snprintf(nm, sizeof nm, "X_%d", j); A[j] = dp__wl_op(&b, nm, DP_OP_INPUT, o.batch, blk, (double)o.batch * blk); }
        for (l = 0; l < o.layers && !b.rc; l++) dp__wl_gpt(&b, l, P, o.batch, blk, A, C, C + P, C + 2 * P, mm);
        dp__wl_norm(&b, DP_OP_LAYERNORM, "lnf", P, o.batch, blk, A, C);
        for (j = 0; j < P && !b.rc; j++) {
            int part[8], k;
            for (k = 0; k < P; k++) {
                int w;
                snprintf(nm, sizeof nm, "head_W_%d%d", k, j);
                w = dp__wl_weight(&b, nm, blk, V);
                snprintf(nm, sizeof nm, "head_mm%d_%d", j, k);
                part[k] = dp__wl_op(&b, nm, DP_OP_MATMUL, o.batch, V, 2.0 * o.batch * blk * V);
                dp__wl_edge(&b, C[k], part[k]);
                dp__wl_edge(&b, w, part[k]);
            }
            if (P > 1) {
                int sum;
                snprintf(nm, sizeof nm, "head_sum%d", j);
                sum = dp__wl_op(&b, nm, DP_OP_REDUCE, o.batch, V, (double)(P - 1) * o.batch * V);
                for (k = 0; k < P; k++) dp__wl_edge(&b, part[k], sum);
            }
        }
        DP_FREE(mm);
    } else if (o.kind == DP_WL_LLAMA_BLOCK || o.kind == DP_WL_LLAMA_LAYER) {
        int nl = o.kind == DP_WL_LLAMA_BLOCK ? 1 : o.layers;
        for (j = 0; j < P; j++) { snprintf(nm, sizeof nm, "X_%d", j); A[j] = dp__wl_op(&b, nm, DP_OP_INPUT, o.batch, blk, (double)o.batch * blk); }
        for (l = 0; l < nl && !b.rc; l++) dp__wl_llama(&b, l, P, o.batch, blk, A, B, C, C + P, C + 2 * P);
    } else if (o.kind == DP_WL_CHAINMM) {
        /* M0 M1 ... M_layers, each dim x dim in P x P blocks */
        for (i = 0; i < P * P; i++) { snprintf(nm, sizeof nm, "M0_%d%d", i / P, i % P); A[i] = dp__wl_op(&b, nm, DP_OP_INPUT, blk, blk, (double)blk * blk); }
        for (l = 1; l <= o.layers; l++) {
            char tag[16];
            for (i = 0; i < P * P; i++) { snprintf(nm, sizeof nm, "M%d_%d%d", l, i / P, i % P); B[i] = dp__wl_weight(&b, nm, blk, blk); }
            snprintf(tag, sizeof tag, "c%d", l);
            dp__wl_blockmm(&b, tag, P, P, A, B, C);
            memcpy(A, C, sizeof(int) * (size_t)P * P);
        }
    } else {
        /* X (batch x dim) in P column blocks; per layer X = relu(X W) */
        for (j = 0; j < P; j++) { snprintf(nm, sizeof nm, "X_%d", j); A[j] = dp__wl_op(&b, nm, DP_OP_INPUT, o.batch, blk, (double)o.batch * blk); }
        for (l = 1; l <= o.layers; l++) {
            char tag[16];
            for (i = 0; i < P * P; i++) { snprintf(nm, sizeof nm, "W%d_%d%d", l, i / P, i % P); B[i] = dp__wl_weight(&b, nm, blk, blk); }
            snprintf(tag, sizeof tag, "f%d", l);
            dp__wl_blockmm(&b, tag, 1, P, A, B, C);
            for (j = 0; j < P; j++) {
                snprintf(nm, sizeof nm, "f%d_relu%d", l, j);
                A[j] = dp__wl_op(&b, nm, DP_OP_RELU, o.batch, blk, (double)o.batch * blk);
                dp__wl_edge(&b, C[j], A[j]);
            }
        }
    }
    if (!b.rc) b.rc = dp_graph_finalize(g, err);
    if (!b.rc) b.rc = dp_graph_check_tensors(g, err);
    if (!b.rc && o.weights) b.rc = dp__wl_fold_weights(g, b.wids, (int)DP__LEN(b.wids), err);
done:
    DP_FREE(A); DP_FREE(B); DP_FREE(C);
    DP__ARRFREE(b.wids);
    if (b.rc) dp_graph_free(g);
    return b.rc;
}

/* ======================================================================
   >>dispatch
   The runtime model (>>runtime) driven by real completions, through an
   executor's hooks (see dp_dispatch in >>api-exec). dp__rt_loop is the
   dispatcher: start an op on every idle device that has one ready, wait
   for completions, apply them all, deliver the copies that have arrived,
   again until every op is done. dp_dispatch runs it on the calling thread
   (the CUDA executor's hooks, doppler_cuda.cu); the CPU executor runs it
   on each of its worker threads under one lock, each worker's wait doing
   that worker's own work (>>exec).
   ====================================================================== */
/* The dispatcher's loop until every op is done: launch, wait (with the
   first held copy's arrival as the deadline), apply every completion the
   wait returned before any device picks again, deliver what has arrived.
   done has room for max completions. */
static int dp__rt_loop(dp__rt *w, const dp_dispatch_hooks *h, int *done, int max, dp_error *err)
{
    int rc, k;
    while (w->ndone < w->n) {
        int cnt = 0;
        double t;
        if ((rc = dp__rt_launch_ready(w, h, 0, 0, err))) return rc;
        if (w->inflight == 0 && w->ndl == 0)
            return dp__fail(err, DP_ERR_GRAPH, "dispatch: %d of %d ops done and nothing left to wait for", w->ndone, w->n);
        if ((rc = h->wait(h->ctx, w->ndl ? w->arrive[w->dl[0]] : -1.0, done, max, &cnt, err))) return rc;
        if (cnt < 0 || cnt > max) return dp__fail(err, DP_ERR_ARG, "dispatch: wait returned %d completions", cnt);
        t = h->now(h->ctx);
        for (k = 0; k < cnt; k++) if ((rc = dp__rt_complete(w, h, done[k], t, 0, err))) return rc;
        while (w->ndl > 0 && w->arrive[w->dl[0]] <= t) {
            int e;
            DP__HEAP_POP(int, w->dl, w->ndl, e, dp__dl_before, w);
            dp__rt_deliver(w, e, t, 0);
        }
    }
    return 0;
}

DPDEF int dp_dispatch(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *opts,
                      const dp_dispatch_hooks *hooks, double *peak_bytes, dp_error *err)
{
    dp__rt w;
    dp_exec_opts o;
    int rc, v;
    dp__ok(err);
    if ((rc = dp_check(g, c, err))) return rc;
    if (!assign || !hooks || !hooks->now || !hooks->launch || !hooks->copy || !hooks->release || !hooks->wait)
        return dp__fail(err, DP_ERR_ARG, "dispatch: assignment or hooks missing");
    for (v = 0; v < g->n_ops; v++)
        if (assign[v] < 0 || assign[v] >= c->n)
            return dp__fail(err, DP_ERR_RANGE, "dispatch: op %d ('%s') on device %d, but the cluster has devices 0..%d", v, g->name[v], assign[v], c->n - 1);
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (o.seconds_per_unit < 0 || o.bytes_scale < 0 || o.device_bytes < 0) return dp__fail(err, DP_ERR_RANGE, "dispatch: negative scale or arena size");
    dp_exec_scales(g, c, &o.seconds_per_unit, &o.bytes_scale);
    if ((rc = dp__rt_init(&w, g, c, NULL, NULL, &o, err))) return rc;
    dp__rt_plan(&w, assign, o.order, o.priority);
    if ((rc = dp__rt_resident_fits(&w, err))) { dp__rt_free(&w); return rc; }
    dp__rt_reset(&w, hooks->now(hooks->ctx));
    rc = dp__rt_loop(&w, hooks, w.done, w.n + w.m, err);
    if (!rc && peak_bytes) memcpy(peak_bytes, w.peak, sizeof(double) * (size_t)w.nd);
    dp__rt_free(&w);
    return rc;
}

/* ======================================================================
   >>exec
   The CPU executor: the dispatcher of >>dispatch (dp__rt_loop) on the
   hooks below, named as doppler_cuda.cu's: dp__cpu_launch hands an op to
   its device's compute worker, dp__cpu_copy a copy to its destination's
   copy worker, dp__cpu_release returns a buffer to the pool, dp__cpu_wait
   does the calling worker's own work (or sleeps until there is some) and
   returns its completion. Unlike the CUDA executor, whose work runs on
   the GPU while one thread dispatches, here the workers run the ops, so
   every worker runs the dispatcher's loop itself, under one mutex that
   guards the dispatcher's state and the queues below: a compute worker
   that ends an op applies the completion and, when its device has the
   next op ready, starts it at once, without waking any other thread.
   Each device has a condition variable for its compute worker and one for
   its copy worker; workers sleep on them while idle. A copy into a device
   is queued for its copy worker, or, when the device's compute worker is
   idle, for that worker itself: a hand-off to an idle device then wakes
   one thread, not two; and a compute worker makes every copy into its
   device that its copy worker has not started before it takes its next
   op, so that a copy whose worker waits for a core (every core computing)
   waits one op at most. The copy worker of the destination of the first
   copy held until its modelled arrival sleeps until that arrival.
   ====================================================================== */
typedef struct dp__cpux {
    const dp_graph *g; const dp_cluster *c; const int *assign;
    int n, m, nd;
    dp__rt rt;              /* the dispatcher's state, under mu */
    pthread_mutex_t mu;
    pthread_cond_t *cv, *xcv;
    int *op;                /* [nd] op launched on the device, not yet taken by its compute worker, or -1 */
    int *xq, *xoff, *xhead, *xtail;   /* copies queued into each device: rings */
    int *cidle;             /* [nd] the compute worker sleeps, waiting for work */
    int timing;             /* the device whose copy worker sleeps until armed, or -1 */
    double armed;
    unsigned char **buf, **xbuf;
    unsigned char **resbuf; /* [nd] each device's resident bytes, held all call */
    size_t *len;            /* [n] bytes of each op's output buffer */
    size_t *sizes;          /* [nsizes] every buffer size of the run, sorted */
    int nsizes;
    unsigned char **pool;   /* [nd * nsizes] freed buffers kept for reuse:
                               a list threaded through the buffers   */
    const float **inp;      /* [m] input pointers of real ops, by in-edge slot */
    uint64_t seed;
    int prec;               /* the matmuls' dp_precision (FP32, TF32, BF16) */
    uint64_t *dig;
    double *start, *end, *busy, *cpu;
    double t0, t_end;
    int stop, failed;
    /* the workers live across runs: gen counts the runs started, finished
       the workers done with the current one; quit ends them */
    pthread_cond_t go, idle;
    int gen, finished, quit, cpu_times;
    dp_error *err;          /* the first failure's message goes here */
    void *arena;            /* the buffers above but pool: one block */
    /* which of mu, cv[0..ncv), xcv[0..nxcv), go and idle exist */
    int mutex_ok, ncv, nxcv, go_ok, idle_ok;
} dp__cpux;

/* One worker thread: the compute worker of dev, or its copy worker; the
   hooks' context. */
typedef struct dp__cpuw {
    dp__cpux *x;
    int dev, copy;
    dp_dispatch_hooks h;
    dp_error err;           /* this worker's failure, copied to x->err if first */
    int done[1];            /* dp__cpu_wait returns one completion at a time */
    double t_done;          /* when the op it returned ended (0: read the clock) */
} dp__cpuw;

/* Bytes of v's buffer (and of a copy of it). */
static size_t dp__buf_bytes(double bytes, double scale)
{
    double b = floor(bytes * scale + 0.5);
    return b < 8 ? 8 : (size_t)b;
}
DPDEF size_t dp_exec_op_bytes(const dp_graph *g, int op, double bytes_scale)
{
    return dp__is_real(g, op) ? sizeof(float) * (size_t)g->rows[op] * (size_t)g->cols[op] : dp__buf_bytes(g->out_bytes[op], bytes_scale);
}

DPDEF size_t dp_exec_edge_bytes(const dp_graph *g, int edge, double bytes_scale)
{
    int u = g->src[edge];
    return dp__is_real(g, u) ? dp_exec_op_bytes(g, u, bytes_scale) : dp__buf_bytes(g->bytes[edge], bytes_scale);
}

DPDEF void dp_exec_scales(const dp_graph *g, const dp_cluster *c, double *seconds_per_unit, double *bytes_scale)
{
    int v, k;
    if (seconds_per_unit && *seconds_per_unit == 0) {
        double work = 0;
        for (v = 0; v < g->n_ops; v++) work += dp_op_time(g, c, v, dp_fastest_device(g, c, v));
        *seconds_per_unit = work > 0 ? 0.1 / work : 1e-3;
    }
    if (bytes_scale && *bytes_scale == 0) {
        double mx = 0;
        for (v = 0; v < g->n_ops; v++) if (g->out_bytes[v] > mx) mx = g->out_bytes[v];
        for (k = 0; k < g->n_edges; k++) if (g->bytes[k] > mx) mx = g->bytes[k];
        *bytes_scale = mx > 65536.0 ? 65536.0 / mx : 1.0;
    }
}

/* Freed buffers are kept per device, by size, and handed out again for a
   request of the same size (most recently freed first), so a run's ops
   reuse warm, already-mapped memory instead of paying malloc and page
   faults per op. The pool never holds more than the run's peak of live
   buffers of each size; the arena accounting counts live buffers only.
   Keeping a buffer allocates nothing (which could fail where a failure
   cannot be reported): every size the run can ask for is known before it
   starts (x->sizes, sorted), and each (device, size) slot heads a list
   linked through the first bytes of the freed buffers themselves (every
   buffer is allocated at least a pointer long). */
static unsigned char *dp__cpu_next(const unsigned char *buf)   /* list link */
{
    unsigned char *next;
    memcpy((void *)&next, (const void *)buf, sizeof next);
    return next;
}


static int dp__cpu_slot(const dp__cpux *x, size_t size)
{
    int lo = 0, hi = x->nsizes - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (x->sizes[mid] == size) return mid;
        if (x->sizes[mid] < size) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* A buffer of size bytes on device d (under the lock): the pool's, else
   a new one; NULL when out of memory. The dispatcher did the accounting. */
static unsigned char *dp__cpu_alloc(dp__cpux *x, int d, size_t size)
{
    int s = dp__cpu_slot(x, size);
    unsigned char **head = s >= 0 ? &x->pool[(size_t)d * x->nsizes + s] : NULL, *p;
    if (head && *head) { p = *head; *head = dp__cpu_next(p); return p; }   /* pop */
    return (unsigned char *)DP_MALLOC(size < sizeof p ? sizeof p : size);
}

/* Back to device d's pool (under the lock); *p becomes NULL. */
static void dp__cpu_free(dp__cpux *x, int d, unsigned char **p, size_t size)
{
    int s;
    if (!*p) return;
    if ((s = dp__cpu_slot(x, size)) >= 0) {   /* push */
        unsigned char **head = &x->pool[(size_t)d * x->nsizes + s];
        memcpy((void *)*p, (const void *)head, sizeof *head);
        *head = *p;
    } else {
        DP_FREE(*p);
    }
    *p = NULL;
}

static int dp__cpu_size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* 64-bit mix of a buffer: four interleaved lanes of 8-byte words (so the
   multiplies overlap), folded into one, then the rest word by word. */
static uint64_t dp__cpu_hash(const unsigned char *b, size_t n, uint64_t h)
{
    uint64_t l[4], w;
    size_t i = 0;
    int k;
    l[0] = h; l[1] = h ^ 0x9e3779b97f4a7c15ULL; l[2] = h ^ 0xbf58476d1ce4e5b9ULL; l[3] = h ^ 0x94d049bb133111ebULL;
    for (; i + 32 <= n; i += 32)
        for (k = 0; k < 4; k++) {
            memcpy(&w, b + i + 8 * k, 8);
            l[k] = (l[k] ^ w) * 0x100000001b3ULL;
            l[k] ^= l[k] >> 29;
        }
    for (k = 1; k < 4; k++) { l[0] = (l[0] ^ l[k]) * 0x100000001b3ULL; l[0] ^= l[0] >> 29; }
    h = l[0];
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* A real op's work in the executor: its kernel, then the hash of its
   output (the digest); dp_calibrate_cpu times exactly this. */
static uint64_t dp__cpu_real(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed, int prec)
{
    if (prec == DP_PREC_TF32 || prec == DP_PREC_BF16) dp__kernel_at(g, v, in, out, seed, prec);
    else dp__kernel(g, v, in, out, seed);
    return dp__cpu_hash((const unsigned char *)out, sizeof(float) * (size_t)g->rows[v] * g->cols[v], 0xcbf29ce484222325ULL ^ (uint64_t)v);
}


/* The hooks. Each is called by a worker's dispatcher loop, under the lock.
   now: the clock, or, right after an op's completion, the time its end was
   read (one clock read less per op). */
static double dp__cpu_now(void *ctx)
{
    dp__cpuw *w = (dp__cpuw *)ctx;
    double t = w->t_done;
    w->t_done = 0;
    return t > 0 ? t : dp_now();
}

/* Op v on device d: its output buffer, then its compute worker is told. */
static int dp__cpu_launch(void *ctx, int v, int d, dp_error *err)
{
    dp__cpuw *w = (dp__cpuw *)ctx;
    dp__cpux *x = w->x;
    size_t size = x->rt.obytes[v];
    if (!(x->buf[v] = dp__cpu_alloc(x, d, size)))
        return dp__fail(err, DP_ERR_NOMEM, "exec: device %d: out of memory allocating %zu bytes for op %d", d, size, v);
    x->len[v] = size;
    x->op[d] = v;
    if (w->copy || w->dev != d) pthread_cond_signal(&x->cv[d]);
    return 0;
}

/* Edge e's copy into its consumer's device: the buffer there, then the
   copy queued for that device's idle compute worker (one thread to wake
   instead of two) or else its copy worker. */
static int dp__cpu_copy(void *ctx, int e, dp_error *err)
{
    dp__cpux *x = ((dp__cpuw *)ctx)->x;
    int dd = x->assign[x->g->dst[e]], *ring = x->xq + x->xoff[dd], cap = x->xoff[dd + 1] - x->xoff[dd];
    size_t size = x->rt.ebytes[e];
    if (!(x->xbuf[e] = dp__cpu_alloc(x, dd, size)))
        return dp__fail(err, DP_ERR_NOMEM, "exec: device %d: out of memory allocating %zu bytes for copy of edge %d", dd, size, e);
    ring[x->xtail[dd] % cap] = e;
    x->xtail[dd]++;
    pthread_cond_signal(x->cidle[dd] ? &x->cv[dd] : &x->xcv[dd]);
    return 0;
}

static int dp__cpu_release(void *ctx, int op, int e, dp_error *err)
{
    dp__cpux *x = ((dp__cpuw *)ctx)->x;
    (void)err;
    if (op >= 0) dp__cpu_free(x, x->assign[op], &x->buf[op], x->len[op]);
    else dp__cpu_free(x, x->assign[x->g->dst[e]], &x->xbuf[e], x->rt.ebytes[e]);
    return 0;
}

/* Takes the oldest copy queued for device d and makes it (the memcpy
   outside the lock: the source stays alive, as this copy holds a
   reference to it, and the destination belongs to this copy alone).
   Returns the edge. */
static int dp__cpu_take_copy(dp__cpux *x, int d)
{
    const dp_graph *g = x->g;
    int cap = x->xoff[d + 1] - x->xoff[d];
    int e = x->xq[x->xoff[d] + x->xhead[d] % cap], u = g->src[e];
    size_t size = x->rt.ebytes[e], have = x->len[u];
    const unsigned char *src = x->buf[u];
    unsigned char *dst = x->xbuf[e];
    x->xhead[d]++;
    pthread_mutex_unlock(&x->mu);
    memcpy(dst, src, size < have ? size : have);
    if (size > have) memset(dst + have, 0, size - have);
    pthread_mutex_lock(&x->mu);
    return e;
}

/* Runs op v on device d (the lock released meanwhile): a real op its
   kernel, an opaque op a busy kernel of its modelled time whose output is
   a function of its inputs' contents; then its times and digest. Returns
   when it ended. */
static double dp__cpu_run(dp__cpux *x, int v, int d)
{
    const dp_graph *g = x->g;
    unsigned char *out = x->buf[v];
    size_t size = x->len[v], i;
    double t_start, c_start, deadline, t_end;
    uint64_t h;
    int k;
    pthread_mutex_unlock(&x->mu);
    t_start = dp_now();
    c_start = x->cpu_times ? dp__thread_cpu() : 0;
    deadline = t_start + dp_op_time(g, x->c, v, d) * x->rt.spu;
    if (dp__is_real(g, v)) {
        const float **in = x->inp + g->in_off[v];
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k], u = g->src[e];
            in[k - g->in_off[v]] = (const float *)(x->assign[u] == d ? x->buf[u] : x->xbuf[e]);
        }
        h = dp__cpu_real(g, v, in, (float *)out, x->seed, x->prec);
    } else {
        h = 0xcbf29ce484222325ULL ^ (uint64_t)v;
        for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k], u = g->src[e];
            const unsigned char *in = x->assign[u] == d ? x->buf[u] : x->xbuf[e];
            size_t esz = x->rt.ebytes[e];
            /* the bytes this edge carries: the same wherever u ran */
            h = dp__cpu_hash(in, esz < x->len[u] ? esz : x->len[u], h);
        }
        for (i = 0; i + 8 <= size; i += 8) {
            uint64_t w = h + i * 0x9e3779b97f4a7c15ULL;
            memcpy(out + i, &w, 8);
        }
        for (; i < size; i++) out[i] = (unsigned char)(h >> (8 * (i & 7)));
        /* busy until its modelled time is up */
        while (dp_now() < deadline) { uint64_t w; memcpy(&w, out, 8); w = w * 6364136223846793005ULL + 1; memcpy(out, &w, 8); }
        memcpy(out, &h, 8);
    }
    if (x->cpu_times) c_start = dp__thread_cpu() - c_start;
    pthread_mutex_lock(&x->mu);
    x->dig[v] = h; x->cpu[v] = c_start;
    t_end = dp_now();
    x->start[v] = t_start - x->t0; x->end[v] = t_end - x->t0;
    x->busy[d] += x->end[v] - x->start[v];
    return t_end;
}

/* The calling worker's work: first a copy queued into its device, then
   (a compute worker) the op launched there; its completion is returned.
   Without work it sleeps (a copy worker whose device receives the first
   held copy until that copy's arrival, the deadline), and returns no
   completion once woken, so that the loop looks again; and at once when
   the deadline has passed or the run has stopped (the first failure's
   code when it failed). */
static int dp__cpu_wait(void *ctx, double deadline, int *done, int max, int *count, dp_error *err)
{
    dp__cpuw *w = (dp__cpuw *)ctx;
    dp__cpux *x = w->x;
    int d = w->dev, woken = 0, held = x->rt.ndl > 0 ? x->rt.dl[0] : -1;
    int timer = held >= 0 ? x->assign[x->g->dst[held]] : -1;   /* the copy worker that times it */
    (void)err; (void)max;
    *count = 0;
    /* unless the copy worker that is to time the first held copy sleeps
       until its arrival already, wake it */
    if (timer >= 0 && !(x->timing == timer && x->armed == deadline) && !(w->copy && timer == d)) pthread_cond_signal(&x->xcv[timer]);
    for (;;) {
        if (x->stop) return x->failed;
        if (x->xhead[d] != x->xtail[d]) { done[(*count)++] = -1 - dp__cpu_take_copy(x, d); return 0; }
        if (!w->copy && x->op[d] >= 0) {
            int v = x->op[d];
            x->op[d] = -1;
            w->t_done = dp__cpu_run(x, v, d);
            done[(*count)++] = v;
            return 0;
        }
        if (woken || (deadline >= 0 && dp_now() >= deadline)) return 0;
        if (!w->copy) {
            x->cidle[d] = 1;
            pthread_cond_wait(&x->cv[d], &x->mu);
            x->cidle[d] = 0;
        } else if (timer == d) {
            struct timespec ts;
            ts.tv_sec = (time_t)deadline;
            ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
            x->timing = d; x->armed = deadline;
            pthread_cond_timedwait(&x->xcv[d], &x->mu, &ts);
            x->timing = -1;
        } else {
            pthread_cond_wait(&x->xcv[d], &x->mu);
        }
        woken = 1;
    }
}

/* A worker thread, started once per dp_exec_cpu and reused by every run:
   it waits for a run to start, runs the dispatcher's loop until the run
   ends or fails, reports, and waits for the next. The first to leave the
   loop stops the run (every op is done, or it failed) and wakes the rest. */
static void *dp__cpu_worker(void *arg)
{
    dp__cpuw *w = (dp__cpuw *)arg;
    dp__cpux *x = w->x;
    int gen = 0, d, rc;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        while (x->gen == gen && !x->quit) pthread_cond_wait(&x->go, &x->mu);
        if (x->quit) break;
        gen = x->gen;
        rc = x->stop ? 0 : dp__rt_loop(&x->rt, &w->h, w->done, 1, &w->err);
        if (rc && !x->failed) {
            x->failed = rc;
            if (x->err) *x->err = w->err;
        }
        if (!x->stop) {
            if (!rc) x->t_end = dp_now();
            x->stop = 1;
            for (d = 0; d < x->nd; d++) { pthread_cond_broadcast(&x->cv[d]); pthread_cond_broadcast(&x->xcv[d]); }
        }
        if (++x->finished == 2 * x->nd) pthread_cond_signal(&x->idle);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

DPDEF void dp_exec_result_free(dp_exec_result *r)
{
    int v;
    if (!r) return;
    if (r->outputs) for (v = 0; v < r->n_ops; v++) DP_FREE(r->outputs[v]);
    DP_FREE(r->outputs);
    DP_FREE(r->wall_runs); DP_FREE(r->busy); DP_FREE(r->start); DP_FREE(r->end); DP_FREE(r->peak_bytes); DP_FREE(r->cpu);
    DP_FREE(r->sms);
    memset(r, 0, sizeof *r);
}

DPDEF int dp_runtime_cost(void *ctx, const dp_graph *g, const dp_cluster *c, const int *assign,
                    const int *order, double *cost, dp_error *err)
{
    const dp_runtime *rt = (const dp_runtime *)ctx;
    dp_runtime none;
    dp_exec_opts eo;
    dp_exec_result r;
    double *prio = NULL;
    int rc, v, opaque = 0;
    if (!rt) { memset(&none, 0, sizeof none); rt = &none; }
    if (!g || !c || !assign || !cost) return dp__fail(err, DP_ERR_ARG, "runtime cost: graph, cluster, assignment or cost missing");
    if (rt->reps < 0) return dp__fail(err, DP_ERR_RANGE, "runtime cost: reps %d is negative", rt->reps);
    if (rt->order == DP_ORDER_PRIORITY) {
        if (!order) return dp__fail(err, DP_ERR_ARG, "runtime cost: priority order without SEL's op order");
        if (!(prio = (double *)dp__alloc((size_t)g->n_ops + 1, sizeof(double), err, "runtime cost"))) return DP_ERR_NOMEM;
    }
    if (!rt->exec) {
        /* the simulator, as dp_train scores a placement */
        dp_sim s;
        memset(&s, 0, sizeof s);
        if (!(rc = dp_sim_init(&s, g, c, err))) rc = dp__sim_cost(&s, assign, order, rt->order, prio, cost, err);
        dp_sim_free(&s);
        DP_FREE(prio);
        return rc;
    }
    memset(&eo, 0, sizeof eo);
    if (rt->exec_opts) eo = *rt->exec_opts;
    eo.order = rt->order;
    eo.reps = rt->reps;
    eo.priority = NULL;
    if (prio) {
        dp_order_to_priority(order, g->n_ops, prio);
        eo.priority = prio;
    }
    memset(&r, 0, sizeof r);
    rc = rt->exec(g, c, assign, &eo, &r, err);
    DP_FREE(prio);
    if (rc) return rc;
    /* in the graph's time units, like the simulator's makespans: opaque ops
       ran seconds_per_unit per unit; real ops ran for real (a calibrated
       cluster's unit is the second) */
    for (v = 0; v < g->n_ops; v++) opaque |= g->kind[v] == DP_OP_OPAQUE;
    *cost = r.wall_median / (opaque ? r.seconds_per_unit : 1.0);
    dp_exec_result_free(&r);
    return 0;
}

DPDEF int dp_exec_compare(const dp_graph *g, const dp_exec_result *got, const dp_exec_result *ref,
                    double *max_err, int *worst_op, dp_error *err)
{
    int v, worst = -1;
    double mx = 0;
    if (max_err) *max_err = 0;
    if (worst_op) *worst_op = -1;
    if (!g || !got || !ref) return dp__fail(err, DP_ERR_ARG, "exec compare: graph or result missing");
    if (got->n_ops != g->n_ops || ref->n_ops != g->n_ops)
        return dp__fail(err, DP_ERR_ARG, "exec compare: results of %d and %d ops for a graph of %d", got->n_ops, ref->n_ops, g->n_ops);
    for (v = 0; v < g->n_ops; v++) {
        size_t n, j;
        double scale = 0, e = 0;
        const float *a, *b;
        if (!dp__is_real(g, v) || g->out_off[v + 1] > g->out_off[v]) continue;
        a = got->outputs ? got->outputs[v] : NULL;
        b = ref->outputs ? ref->outputs[v] : NULL;
        if (!a || !b) return dp__fail(err, DP_ERR_ARG, "exec compare: no output of sink '%s' in the %s (run with keep_outputs)", g->name[v], a ? "reference" : "result");
        n = (size_t)g->rows[v] * (size_t)g->cols[v];
        for (j = 0; j < n; j++) if (fabs((double)b[j]) > scale) scale = fabs((double)b[j]);
        if (!(scale > 0)) scale = 1;
        for (j = 0; j < n; j++) {
            double d = fabs((double)a[j] - (double)b[j]);
            if (a[j] != a[j] && b[j] != b[j]) d = 0;     /* NaN in both */
            else if (!(d == d)) d = HUGE_VAL;             /* NaN in one */
            if (d / scale > e) e = d / scale;
        }
        if (worst < 0 || e > mx) { worst = v; if (e > mx) mx = e; }
    }
    if (max_err) *max_err = mx;
    if (worst_op) *worst_op = worst;
    dp__ok(err);
    return 0;
}


/* The median of n values (the lower middle for an even n): its index. */
DPDEF int dp__median_index(const double *v, int n)
{
    int i, j;
    for (i = 0; i < n; i++) {
        int below = 0, equal = 0;
        for (j = 0; j < n; j++) { below += v[j] < v[i]; equal += v[j] == v[i]; }
        if (below <= (n - 1) / 2 && below + equal > (n - 1) / 2) return i;
    }
    return 0;
}

/* The result's buffers: the caller's, each freed on its own
   (dp_exec_result_free). */
static int dp__exec_result_alloc(dp_exec_result *res, int n, int nd, const dp_exec_opts *o, dp_error *err)
{
    if ((o->cpu_times && !(res->cpu = (double *)dp__alloc((size_t)n, sizeof(double), err, "executor result")))
        || !(res->wall_runs = (double *)dp__alloc((size_t)o->reps, sizeof(double), err, "executor result"))
        || !(res->busy = (double *)dp__alloc((size_t)nd, sizeof(double), err, "executor result"))
        || !(res->start = (double *)dp__alloc((size_t)n, sizeof(double), err, "executor result"))
        || !(res->end = (double *)dp__alloc((size_t)n, sizeof(double), err, "executor result"))
        || !(res->peak_bytes = (double *)dp__alloc((size_t)nd, sizeof(double), err, "executor result"))
        || (o->keep_outputs && !(res->outputs = (float **)dp__alloc((size_t)n, sizeof(float *), err, "executor result"))))
        return DP_ERR_NOMEM;
    if (o->keep_outputs) res->n_ops = n;
    return 0;
}

/* The buffer pool: one free list per device and size, every size a
   buffer of this run can have (outputs and copies), sorted, once each. */
static int dp__cpu_pool_init(dp__cpux *x, dp_error *err)
{
    int v, k, n = x->n, m = x->m;
    for (v = 0; v < n; v++) x->sizes[v] = x->rt.obytes[v];
    for (k = 0; k < m; k++) x->sizes[n + k] = x->rt.ebytes[k];
    qsort(x->sizes, (size_t)n + m, sizeof(size_t), dp__cpu_size_cmp);
    for (k = 0; k < n + m; k++) if (!x->nsizes || x->sizes[k] != x->sizes[x->nsizes - 1]) x->sizes[x->nsizes++] = x->sizes[k];
    x->pool = (unsigned char **)dp__alloc((size_t)x->nd * x->nsizes, sizeof(unsigned char *), err, "executor buffer pool");
    return x->pool ? 0 : DP_ERR_NOMEM;
}

/* The workers, started once for every run: a compute and a copy worker
   per device, each with the hooks; *started counts those running. */
static int dp__cpu_start_workers(dp__cpux *x, dp__cpuw *wk, pthread_t *th, int *started, dp_error *err)
{
    int k, nd = x->nd;
    for (k = 0; k < 2 * nd; k++) {
        dp__cpuw *w = &wk[k];
        w->x = x; w->dev = k % nd; w->copy = k >= nd;
        w->h.ctx = w; w->h.now = dp__cpu_now; w->h.launch = dp__cpu_launch; w->h.copy = dp__cpu_copy;
        w->h.release = dp__cpu_release; w->h.wait = dp__cpu_wait;
        if (pthread_create(&th[k], NULL, dp__cpu_worker, w) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec: cannot start a worker thread");
        ++*started;
    }
    return 0;
}

/* One run: the workers are woken, run the dispatcher's loop and report;
   returns when all 2 nd of them have. */
static void dp__cpu_run_all(dp__cpux *x)
{
    int d, nd = x->nd;
    pthread_mutex_lock(&x->mu);
    x->stop = x->failed = 0;
    for (d = 0; d < nd; d++) { x->op[d] = -1; x->xhead[d] = x->xtail[d] = x->cidle[d] = 0; x->busy[d] = 0; }
    x->timing = -1; x->armed = -1;
    x->finished = 0; x->t_end = 0;
    x->t0 = dp_now();
    dp__rt_reset(&x->rt, x->t0);
    x->gen++;
    pthread_cond_broadcast(&x->go);
    while (x->finished < 2 * nd) pthread_cond_wait(&x->idle, &x->mu);
    pthread_mutex_unlock(&x->mu);
}

/* The started workers told to quit, and joined. */
static void dp__cpu_stop_workers(dp__cpux *x, pthread_t *th, int started)
{
    int k;
    if (!started) return;
    pthread_mutex_lock(&x->mu);
    x->quit = 1;
    pthread_cond_broadcast(&x->go);
    pthread_mutex_unlock(&x->mu);
    for (k = 0; k < started; k++) pthread_join(th[k], NULL);
}

/* The mutex and condition variables of x (nd of cv and xcv; the copy
   workers' xcv wait with deadlines on the monotonic clock, dp_now), each
   marked made in x so that dp__cpu_sync_free destroys exactly those. */
static int dp__cpu_sync_init(dp__cpux *x, dp_error *err)
{
    pthread_condattr_t ca;
    int ok;
    if (pthread_mutex_init(&x->mu, NULL) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec: cannot create a mutex");
    x->mutex_ok = 1;
    for (; x->ncv < x->nd; x->ncv++)
        if (pthread_cond_init(&x->cv[x->ncv], NULL) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec: cannot create a condition variable");
    ok = pthread_condattr_init(&ca) == 0 && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    for (; ok && x->nxcv < x->nd; x->nxcv++) if (pthread_cond_init(&x->xcv[x->nxcv], &ca) != 0) break;
    pthread_condattr_destroy(&ca);
    if (!ok || x->nxcv < x->nd) return dp__fail(err, DP_ERR_NOMEM, "exec: cannot create a condition variable");
    if (pthread_cond_init(&x->go, NULL) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec: cannot create a condition variable");
    x->go_ok = 1;
    if (pthread_cond_init(&x->idle, NULL) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec: cannot create a condition variable");
    x->idle_ok = 1;
    return 0;
}

static void dp__cpu_sync_free(dp__cpux *x)
{
    int d;
    if (x->go_ok) pthread_cond_destroy(&x->go);
    if (x->idle_ok) pthread_cond_destroy(&x->idle);
    for (d = 0; d < x->ncv; d++) pthread_cond_destroy(&x->cv[d]);
    for (d = 0; d < x->nxcv; d++) pthread_cond_destroy(&x->xcv[d]);
    if (x->mutex_ok) pthread_mutex_destroy(&x->mu);
}

DPDEF int dp__exec_args(const dp_graph *g, const dp_cluster *c, const int *assign, dp_exec_opts *o,
                        const dp_exec_result *res, const char *who, dp_error *err)
{
    int rc, v;
    if (!res) return dp__fail(err, DP_ERR_ARG, "%s: no result given", who);
    if ((rc = dp_check(g, c, err))) return rc;
    if (!assign) return dp__fail(err, DP_ERR_ARG, "%s: no assignment given", who);
    for (v = 0; v < g->n_ops; v++)
        if (assign[v] < 0 || assign[v] >= c->n)
            return dp__fail(err, DP_ERR_RANGE, "%s: op %d ('%s') on device %d, but the cluster has devices 0..%d", who, v, g->name[v], assign[v], c->n - 1);
    if (o->reps == 0) o->reps = 1;
    if (o->reps < 0 || o->reps > 10000) return dp__fail(err, DP_ERR_RANGE, "%s: reps %d not in 1..10000", who, o->reps);
    if (o->seconds_per_unit < 0 || o->bytes_scale < 0 || o->device_bytes < 0)
        return dp__fail(err, DP_ERR_RANGE, "%s: negative scale or arena size", who);
    if ((int)o->precision < 0 || (int)o->precision >= DP_PREC__COUNT)
        return dp__fail(err, DP_ERR_RANGE, "%s: precision %d is none of DP_PREC_DEFAULT (0), FP32 (1), TF32 (2), BF16 (3)", who, (int)o->precision);
    if ((rc = dp_graph_check_tensors(g, err))) return rc;
    dp_exec_scales(g, c, &o->seconds_per_unit, &o->bytes_scale);
    return 0;
}

DPDEF const char *dp_precision_name(int p)
{
    static const char *const names[DP_PREC__COUNT] = {"default", "fp32", "tf32", "bf16"};
    return p >= 0 && p < DP_PREC__COUNT ? names[p] : "?";
}

DPDEF double dp_exec_tolerance(int p)
{
    return p == DP_PREC_TF32 ? 1e-2 : p == DP_PREC_BF16 ? 8e-2 : DP_EXEC_TOL;
}

DPDEF double dp_matmul_err_bound(int p, long long K)
{
    double u32 = ldexp(1.0, -24), u = p == DP_PREC_BF16 ? ldexp(1.0, -8) : p == DP_PREC_FP32 ? 0.0 : ldexp(1.0, -11);
    double ku = (double)(K > 0 ? K : 0) * u32, gamma;
    if (ku >= 1) return HUGE_VAL;
    gamma = ku / (1 - ku);
    return (2 * u + u * u) + gamma * (1 + u) * (1 + u);
}

DPDEF int dp_exec_cpu(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *opts,
                      dp_exec_result *res, dp_error *err)
{
    dp_exec_opts o;
    dp__cpux x;
    dp__cpuw *wk = NULL;
    pthread_t *th = NULL;
    double *runs_start = NULL, *runs_end = NULL, *runs_busy = NULL, *runs_peak = NULL, *runs_cpu = NULL;
    uint64_t digest = 0;
    int rc = 0, nd, n, m, r, v, d, k, started = 0, pass;
    dp__arena ar;
    memset(&ar, 0, sizeof ar);
    memset(&x, 0, sizeof x);
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (res) memset(res, 0, sizeof *res);
    dp__ok(err);
    if ((rc = dp__exec_args(g, c, assign, &o, res, "exec", err))) return rc;
    /* TF32 and BF16: the matmuls' inputs rounded as the tensor cores
       round them (dp__kernel_at), FP32 sums: the CUDA executor's
       arithmetic in that precision but for the order of the sums */
    res->precision = o.precision == DP_PREC_DEFAULT ? DP_PREC_FP32 : (int)o.precision;
    if (o.dispatch != DP_DISPATCH_DYNAMIC)
        return dp__fail(err, DP_ERR_ARG, "exec (cpu): dispatch %d: the CPU executor dispatches dynamically only (static and graph are CUDA's)", (int)o.dispatch);
    n = g->n_ops; m = g->n_edges; nd = c->n;
    x.g = g; x.c = c; x.assign = assign; x.n = n; x.m = m; x.nd = nd;
    x.err = err; x.seed = o.seed; x.prec = res->precision; x.cpu_times = o.cpu_times != 0;
    if ((rc = dp__rt_init(&x.rt, g, c, NULL, NULL, &o, err))) return rc;
    dp__rt_plan(&x.rt, assign, o.order, o.priority);
    if ((rc = dp__rt_resident_fits(&x.rt, err))) { dp__rt_free(&x.rt); return rc; }
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &x.arena, err, "executor"))) goto done;
        DP__A(x.cv, nd, pthread_cond_t); DP__A(x.xcv, nd, pthread_cond_t); DP__A(x.op, nd, int);
        DP__A(x.xq, (size_t)m + nd, int); DP__A(x.xoff, nd + 1, int); DP__A(x.xhead, nd, int); DP__A(x.xtail, nd, int);
        DP__A(x.cidle, nd, int); DP__A(x.inp, (size_t)m + 1, const float *);
        DP__A(x.buf, n, unsigned char *); DP__A(x.xbuf, (size_t)m + 1, unsigned char *); DP__A(x.len, n, size_t);
        DP__A(x.dig, n, uint64_t);
        DP__A(x.sizes, (size_t)n + m, size_t);
        DP__A(x.start, n, double); DP__A(x.end, n, double); DP__A(x.busy, nd, double);
        DP__A(wk, 2 * (size_t)nd, dp__cpuw); DP__A(th, 2 * (size_t)nd, pthread_t);
        DP__A(runs_start, (size_t)o.reps * n, double); DP__A(runs_end, (size_t)o.reps * n, double); DP__A(runs_cpu, (size_t)o.reps * n, double);
        DP__A(x.cpu, n, double);
        DP__A(runs_busy, (size_t)o.reps * nd, double); DP__A(runs_peak, (size_t)o.reps * nd, double);
        DP__A(x.resbuf, nd, unsigned char *);
    }
    /* resident bytes (weights): allocated, and touched, before the runs */
    for (d = 0; d < nd; d++) {
        size_t rb = (size_t)x.rt.resid[d];
        if (rb == 0) continue;
        if (!(x.resbuf[d] = (unsigned char *)DP_MALLOC(rb))) { rc = dp__fail(err, DP_ERR_NOMEM, "exec: device %d: out of memory allocating its %zu resident bytes", d, rb); goto done; }
        memset(x.resbuf[d], 0, rb);
    }
    if ((rc = dp__cpu_pool_init(&x, err))) goto done;
    if ((rc = dp__exec_result_alloc(res, n, nd, &o, err))) goto done;
    if ((rc = dp__cpu_sync_init(&x, err))) goto done;
    /* copy rings: the copies into each device (one slot spare) */
    for (k = 0; k < m; k++) if (assign[g->src[k]] != assign[g->dst[k]]) x.xoff[assign[g->dst[k]] + 1]++;
    for (d = 0; d < nd; d++) x.xoff[d + 1] += x.xoff[d] + 1;
    /* the workers, started once for every run */
    rc = dp__cpu_start_workers(&x, wk, th, &started, err);
    for (r = 0; r < o.reps && !rc; r++) {
        uint64_t dg = 0xcbf29ce484222325ULL;
        dp__cpu_run_all(&x);
        /* the run ends with its last op, not when this thread wakes up */
        res->wall_runs[r] = (x.t_end > 0 ? x.t_end : dp_now()) - x.t0;
        if (x.failed) rc = x.failed;
        else if (x.rt.ndone != n) rc = dp__fail(err, DP_ERR_GRAPH, "exec: run ended with %d of %d ops done", x.rt.ndone, n);
        for (v = 0; v < n; v++) dg = (dg ^ x.dig[v]) * 0x100000001b3ULL;
        if (r == 0) digest = dg;
        else if (!rc && dg != digest) rc = dp__fail(err, DP_ERR_GRAPH, "exec: run %d computed different outputs than run 0", r);
        memcpy(runs_start + (size_t)r * n, x.start, sizeof(double) * (size_t)n);
        memcpy(runs_cpu + (size_t)r * n, x.cpu, sizeof(double) * (size_t)n);
        memcpy(runs_end + (size_t)r * n, x.end, sizeof(double) * (size_t)n);
        memcpy(runs_busy + (size_t)r * nd, x.busy, sizeof(double) * (size_t)nd);
        memcpy(runs_peak + (size_t)r * nd, x.rt.peak, sizeof(double) * (size_t)nd);
        /* the last run's real sinks' outputs, when asked for */
        if (!rc && o.keep_outputs && r == o.reps - 1)
            for (v = 0; v < n && !rc; v++) {
                if (!dp__is_real(g, v) || g->out_off[v + 1] > g->out_off[v]) continue;
                if (!(res->outputs[v] = (float *)dp__alloc(x.len[v], 1, err, "executor outputs"))) rc = DP_ERR_NOMEM;
                else memcpy(res->outputs[v], x.buf[v], x.len[v]);
            }
        /* what is left: sinks' outputs (back to the pool, for the next
           run), and everything after a failure */
        for (v = 0; v < n; v++) dp__cpu_free(&x, assign[v], &x.buf[v], x.len[v]);
        for (k = 0; k < m; k++) { DP_FREE(x.xbuf[k]); x.xbuf[k] = NULL; }
    }
    dp__cpu_stop_workers(&x, th, started);
    if (!rc) {
        int med = dp__median_index(res->wall_runs, o.reps);   /* the median run */
        res->n_ops = n; res->n_devices = nd; res->reps = o.reps;
        res->wall_median = res->wall_runs[med];
        memcpy(res->start, runs_start + (size_t)med * n, sizeof(double) * (size_t)n);
        if (res->cpu) memcpy(res->cpu, runs_cpu + (size_t)med * n, sizeof(double) * (size_t)n);
        memcpy(res->end, runs_end + (size_t)med * n, sizeof(double) * (size_t)n);
        memcpy(res->busy, runs_busy + (size_t)med * nd, sizeof(double) * (size_t)nd);
        memcpy(res->peak_bytes, runs_peak + (size_t)med * nd, sizeof(double) * (size_t)nd);
        res->digest = digest;
        res->seconds_per_unit = o.seconds_per_unit;
        res->bytes_scale = o.bytes_scale;
    }
done:
    dp__cpu_sync_free(&x);
    if (x.pool)
        for (k = 0; k < nd * x.nsizes; k++)
            while (x.pool[k]) { unsigned char *b = x.pool[k]; x.pool[k] = dp__cpu_next(b); DP_FREE(b); }
    DP_FREE(x.pool);
    if (x.resbuf) for (d = 0; d < nd; d++) DP_FREE(x.resbuf[d]);
    DP_FREE(x.arena);
    dp__rt_free(&x.rt);
    if (rc) dp_exec_result_free(res);
    return rc;
}

/* ======================================================================
   >>calibrate
   ====================================================================== */
/* One device's share of a kernel measurement: the op in a loop for
   `seconds` of wall time (at least 3 batches), while the other devices'
   threads do the same (as in the executor, where every device computes at
   once). Calls are timed in batches (doubled until a batch takes 50 us) in
   the thread's CPU time, so that time other processes take from this
   thread does not count: the calibration measures the machine, not its
   load. The measurement is the mean CPU time per call. */
typedef struct dp__calarg {
    const dp_graph *g; int v;
    float *buf; size_t set; int nsets, nin;   /* nsets sets of inputs and output, set floats apart */
    double seconds, cpu; long calls;
} dp__calarg;

static void *dp__cal_worker(void *p)
{
    dp__calarg *a = (dp__calarg *)p;
    double t0 = dp_now(), c1, dc;
    long batch = 1, i, nb = 0;
    a->cpu = 0; a->calls = 0;
    do {
        c1 = dp__thread_cpu();
        for (i = 0; i < batch; i++, a->calls++) {
            /* each call on the next set: inputs and output out of the
               caches of the last calls, as the executor's ops find them */
            float *base = a->buf + a->set * (size_t)(a->calls % a->nsets);
            const float *in[2];
            in[0] = base; in[1] = base + a->set / 4;
            dp__cpu_real(a->g, a->v, in, base + a->set / 2, 1, DP_PREC_FP32);
        }
        dc = dp__thread_cpu() - c1;
        a->cpu += dc;
        nb++;
        if (dc < 50e-6 && batch < (1L << 20)) batch *= 2;
    } while (dp_now() - t0 < a->seconds || nb < 3);
    return NULL;
}

static int dp__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double dp__median(double *v, int n)   /* sorts v */
{
    qsort(v, (size_t)n, sizeof(double), dp__cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* CPU seconds per call of op `v` of g on every device's thread at once
   (the mean over the devices and their calls); ca[d] holds device d's
   buffer sets. */
static int dp__cal_kernel(const dp_graph *g, int v, int nd, dp__calarg *ca, pthread_t *th, double *sec, dp_error *err)
{
    int d, started = 0;
    double sum = 0;
    for (d = 0; d < nd; d++) { ca[d].g = g; ca[d].v = v; }
    for (d = 0; d < nd; d++) {
        if (pthread_create(&th[d], NULL, dp__cal_worker, &ca[d]) != 0) break;
        started++;
    }
    for (d = 0; d < started; d++) pthread_join(th[d], NULL);
    if (started < nd) return dp__fail(err, DP_ERR_NOMEM, "calibration: cannot start a thread");
    for (d = 0; d < nd; d++) sum += ca[d].cpu / (double)ca[d].calls;
    *sec = sum / nd;
    return 0;
}

/* Operand sets per device at side s: sets of (input, input, output of up
   to 2 s^2) of 4 s^2 floats, as many as fill 4 MiB (1 to 8), so that a
   call's operands are not the last call's, still in the core's caches. */
static int dp__cal_sets(int s)
{
    double n = (4u << 20) / (16.0 * s * s);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* The floats one device's operand sets at side s take. */
static size_t dp__cal_floats(int s)
{
    return (size_t)dp__cal_sets(s) * 4 * s * s;
}

/* One device's share of the measurements at side s: its operand sets,
   from base, filled with the workloads' input values. */
static void dp__cal_prepare(dp__calarg *ca, float *base, int s, double seconds)
{
    int q, k, nsets = dp__cal_sets(s);
    size_t set = (size_t)4 * s * s;
    memset(ca, 0, sizeof *ca);
    ca->buf = base; ca->set = set; ca->nsets = nsets; ca->seconds = seconds;
    for (q = 0; q < nsets; q++)
        for (k = 0; k < s * s; k++) {
            base[set * q + k] = dp__input_value(1, 0, (size_t)k);
            base[set * q + (size_t)s * s + k] = dp__input_value(1, 1, (size_t)k) * 0.5f + 0.1f;
        }
}

/* The graph of one measurement (g initialised here; free it in any case):
   an op of kind kd on side x side operands, two inputs where it takes two
   (concat makes side x 2 side, split takes half), its compute
   dp_op_flops. *op gets the op's index. */
static int dp__cal_graph(dp_graph *g, dp_kind kd, int s, int *op, dp_error *err)
{
    int nin = kd == DP_OP_INPUT ? 0 : (kd == DP_OP_MATMUL || kd == DP_OP_ADD || kd == DP_OP_REDUCE || kd == DP_OP_MUL || kd == DP_OP_CONCAT) ? 2 : 1;
    int j, rc = 0, cols = kd == DP_OP_CONCAT ? 2 * s : kd == DP_OP_SPLIT ? s / 2 : s;
    dp_op_desc dd;
    dp_graph_init(g);
    for (j = 0; j < nin && !rc; j++) {
        memset(&dd, 0, sizeof dd);
        dd.kind = DP_OP_INPUT; dd.rows = s; dd.cols = s;
        rc = dp_graph_add_op(g, &dd, NULL, err);
    }
    memset(&dd, 0, sizeof dd);
    dd.kind = kd; dd.rows = s; dd.cols = cols; dd.compute = dp_op_flops(kd, s, cols, s, nin);
    if (!rc) rc = dp_graph_add_op(g, &dd, NULL, err);
    for (j = 0; j < nin && !rc; j++) rc = dp_graph_add_edge(g, j, nin, 0, err);
    if (!rc) rc = dp_graph_finalize(g, err);
    *op = nin;
    return rc;
}

/* A chain of n ops of kind copy on side x side tensors (one input op
   first), alternating between devices a and b of c (a == b: on one; a
   != b: every edge a hand-off), run by the executor `run` (dp_exec_cpu,
   dp_exec_mpi) with the options base (NULL: none; reps 0 -> 5): the
   median over the chain's edges of the time from an op's end to its
   successor's start, in the median run. */
static int dp__cal_chain(int n, int side, int a, int b, const dp_cluster *c, dp_exec_fn run, const dp_exec_opts *base,
                         double *gap, dp_error *err)
{
    dp_graph ch;
    dp_exec_opts eo;
    dp_exec_result r;
    int i, rc = 0, *as = (int *)dp__alloc((size_t)n, sizeof(int), err, "calibration");
    double *gaps = (double *)dp__alloc((size_t)n, sizeof(double), err, "calibration");
    if (!as || !gaps) { DP_FREE(as); DP_FREE(gaps); return DP_ERR_NOMEM; }
    dp_graph_init(&ch);
    for (i = 0; i < n && !rc; i++) {
        dp_op_desc dd;
        memset(&dd, 0, sizeof dd);
        dd.kind = i ? DP_OP_COPY : DP_OP_INPUT; dd.rows = side; dd.cols = side;
        dd.compute = dp_op_flops(dd.kind, side, side, 0, i ? 1 : 0); dd.out_bytes = 4.0 * side * side;
        rc = dp_graph_add_op(&ch, &dd, NULL, err);
        if (!rc && i) rc = dp_graph_add_edge(&ch, i - 1, i, dd.out_bytes, err);
        as[i] = i % 2 ? b : a;
    }
    if (!rc) rc = dp_graph_finalize(&ch, err);
    memset(&eo, 0, sizeof eo);
    if (base) eo = *base;
    if (!eo.reps) eo.reps = 5;
    if (!rc && !(rc = run(&ch, c, as, &eo, &r, err))) {
        for (i = 1; i < n; i++) gaps[i - 1] = r.start[i] - r.end[i - 1];
        *gap = dp__median(gaps, n - 1);
        dp_exec_result_free(&r);
    }
    dp_graph_free(&ch);
    DP_FREE(as); DP_FREE(gaps);
    return rc;
}

/* n independent 1 x 1 input ops on each of nd devices, all ready at once,
   run by the executor: the median time from an op's start to the next
   one's on its device (its 1-element kernel is negligible), in the median
   run. */
static int dp__cal_overhead(int n, const dp_cluster *cn, double *per_op, dp_error *err)
{
    dp_graph gg;
    dp_exec_opts eo;
    dp_exec_result r;
    int i, rc = 0, nd = cn->n, *as = (int *)dp__alloc((size_t)n * nd, sizeof(int), err, "calibration");
    double *cyc = (double *)dp__alloc((size_t)n * nd, sizeof(double), err, "calibration");
    if (!as || !cyc) { DP_FREE(as); DP_FREE(cyc); return DP_ERR_NOMEM; }
    dp_graph_init(&gg);
    for (i = 0; i < n * nd && !rc; i++) {
        dp_op_desc dd;
        memset(&dd, 0, sizeof dd);
        dd.kind = DP_OP_INPUT; dd.rows = 1; dd.cols = 1; dd.compute = 1; dd.out_bytes = 4;
        rc = dp_graph_add_op(&gg, &dd, NULL, err);
        as[i] = i % nd;
    }
    if (!rc) rc = dp_graph_finalize(&gg, err);
    memset(&eo, 0, sizeof eo);
    eo.reps = 5;
    if (!rc && !(rc = dp_exec_cpu(&gg, cn, as, &eo, &r, err))) {
        /* FIFO with equal ready times runs each device's ops in index
           order: op i, then op i + nd */
        int k = 0;
        for (i = 0; i + nd < n * nd; i++) cyc[k++] = r.start[i + nd] - r.start[i];
        *per_op = dp__median(cyc, k);
        dp_exec_result_free(&r);
    }
    dp_graph_free(&gg);
    DP_FREE(as); DP_FREE(cyc);
    return rc;
}

/* Hand-offs between devices into c: chains alternating between two devices
   against the same chains on one, with 1 x 1 tensors (latency) and side x
   side ones (bytes per second, side at most min(S, 512)); a and bufs
   scratch of at least that many floats. */
static int dp__cal_handoff(dp_cluster *c, const dp_calibrate_opts *o, float *a, float *bufs, int S, dp_error *err)
{
    double lat = 0, bw = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, t0, t;
    int big = S < 512 ? S : 512;   /* 1 MiB copies: their time stands out of the latency's noise */
    int k, d, rc;
    long reps = 0;
    /* memcpy bandwidth: the fallback when the chains cannot resolve it,
       and the cap on what they measure */
    for (k = 0; k < big * big; k++) a[k] = dp__input_value(1, 0, (size_t)k);
    t0 = dp_now();
    do { memcpy(bufs, a, sizeof(float) * (size_t)big * big); reps++; t = dp_now() - t0; } while (t < o->seconds);
    bw = (double)reps * sizeof(float) * big * big / t;
    if (o->devices > 1) {
        dp_cluster c2;
        double extra;
        if ((rc = dp_cluster_homogeneous(&c2, 2, 1e9, 1e10, 0, err))) return rc;
        rc = dp__cal_chain(400, 1, 0, 0, &c2, dp_exec_cpu, NULL, &w1, err);
        if (!rc) rc = dp__cal_chain(400, 1, 0, 1, &c2, dp_exec_cpu, NULL, &w2, err);
        if (!rc) rc = dp__cal_chain(100, big, 0, 0, &c2, dp_exec_cpu, NULL, &w3, err);
        if (!rc) rc = dp__cal_chain(100, big, 0, 1, &c2, dp_exec_cpu, NULL, &w4, err);
        dp_cluster_free(&c2);
        if (rc) return rc;
        /* a hand-off's gap over a same-device one: latency, and with
           big tensors the copy's bytes on top */
        lat = w2 - w1;
        if (lat < 0) lat = 0;
        extra = (w4 - w3) - lat;
        /* a copy is no faster than memcpy of the same buffer: when the
           chains' difference is within their noise, keep memcpy's */
        if (extra > 0 && 4.0 * big * big / extra < bw) bw = 4.0 * big * big / extra;
    }
    for (d = 0; d < o->devices * o->devices; d++) {
        c->bandwidth[d] = bw;
        c->latency[d] = d / o->devices == d % o->devices ? 0 : lat;
    }
    return 0;
}

DPDEF int dp_calibrate_cpu(dp_cluster *out, const dp_calibrate_opts *opts, dp_error *err)
{
    enum { NS = 10, MAX_SWEEPS = 100 };
    dp_calibrate_opts o;
    dp_cluster c;
    int rc, k, d, i, r, ns = 0, side[NS], S;
    float *a = NULL, *bufs = NULL;
    size_t per_dev = 0;
    double ovh = 0, speed_top = 0, *secs = NULL;   /* [sweeps][kinds][NS] */
    dp_speed_point (*pts)[NS] = NULL;
    dp__calarg *ca = NULL;
    pthread_t *th = NULL;
    dp_graph g;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    if (o.devices == 0) o.devices = 2;
    if (o.size == 0) o.size = 512;
    if (o.seconds == 0) o.seconds = 0.005;
    if (o.sweeps == 0) o.sweeps = 5;
    if (o.devices < 1 || o.devices > DP_MAX_DEVICES) return dp__fail(err, o.devices < 1 ? DP_ERR_RANGE : DP_ERR_LIMIT, "calibrate: devices %d not in 1..%d (DP_MAX_DEVICES)", o.devices, DP_MAX_DEVICES);
    if (o.size < 8 || o.size > 2048) return dp__fail(err, DP_ERR_RANGE, "calibrate: size %d not in 8..2048", o.size);
    if (!(o.seconds > 0 && o.seconds <= 10)) return dp__fail(err, DP_ERR_RANGE, "calibrate: seconds %g not in (0, 10]", o.seconds);
    if (o.sweeps < 1 || o.sweeps > MAX_SWEEPS) return dp__fail(err, DP_ERR_RANGE, "calibrate: sweeps %d not in 1..%d", o.sweeps, (int)MAX_SWEEPS);
    if (o.dispatch != 0) return dp__fail(err, DP_ERR_ARG, "calibrate (cpu): dispatch %d: the CPU executor dispatches dynamically only", o.dispatch);
    if (o.precision != DP_PREC_DEFAULT && o.precision != DP_PREC_FP32)
        return dp__fail(err, DP_ERR_ARG, "calibrate (cpu): precision %s: the CPU kernels compute in fp32 only", dp_precision_name(o.precision));
    /* sides: 16, 32, ... below size, then size (8 when size < 16) */
    for (S = 16; S < o.size && ns < NS - 1; S *= 2) side[ns++] = S;
    side[ns++] = o.size;
    S = o.size;
    /* per device, the largest side's operand sets (dp__cal_sets) */
    for (i = 0; i < ns; i++) {
        size_t need = dp__cal_floats(side[i]);
        if (need > per_dev) per_dev = need;
    }
    if ((rc = dp_cluster_homogeneous(&c, o.devices, 1e9, 1e10, 0, err))) return rc;
    a = (float *)dp__alloc((size_t)S * S, sizeof(float), err, "calibration");
    bufs = (float *)dp__alloc(per_dev * o.devices, sizeof(float), err, "calibration");
    pts = (dp_speed_point (*)[NS])dp__alloc(DP_KIND__COUNT, sizeof *pts, err, "calibration");
    ca = (dp__calarg *)dp__alloc((size_t)o.devices, sizeof *ca, err, "calibration");
    th = (pthread_t *)dp__alloc((size_t)o.devices, sizeof *th, err, "calibration");
    secs = (double *)dp__alloc((size_t)o.sweeps * DP_KIND__COUNT * NS, sizeof(double), err, "calibration");
    if (!a || !bufs || !pts || !ca || !th || !secs) { rc = DP_ERR_NOMEM; goto done; }
    /* every kind's op, as the executor runs it (kernel and output hash), on
       side x side operands (two inputs where it takes two; concat makes
       side x 2 side, split takes half), at every side: its speed curve,
       each point the median of the sweeps */
    for (r = 0; r < o.sweeps; r++)
    for (i = 0; i < ns; i++) {
        for (d = 0; d < o.devices; d++) dp__cal_prepare(&ca[d], bufs + per_dev * d, side[i], o.seconds);
        for (k = 1; k < DP_KIND__COUNT; k++) {
            double sec = 0;
            int op;
            rc = dp__cal_graph(&g, (dp_kind)k, side[i], &op, err);
            if (!rc) rc = dp__cal_kernel(&g, op, o.devices, ca, th, &sec, err);
            if (!rc) {
                secs[((size_t)r * DP_KIND__COUNT + k) * NS + i] = sec;
                pts[k][i].work = g.compute[op];
            }
            dp_graph_free(&g);
            if (rc) goto done;
        }
    }
    for (k = 1; k < DP_KIND__COUNT; k++)
        for (i = 0; i < ns; i++) {
            double v[MAX_SWEEPS], sec;
            for (r = 0; r < o.sweeps; r++) v[r] = secs[((size_t)r * DP_KIND__COUNT + k) * NS + i];
            sec = dp__median(v, o.sweeps);
            pts[k][i].speed = pts[k][i].work / (sec > 1e-9 ? sec : 1e-9);
        }
    for (k = 1; k < DP_KIND__COUNT; k++)
        if ((rc = dp_cluster_set_curve(&c, -1, (dp_kind)k, pts[k], ns, err))) goto done;
    speed_top = pts[DP_OP_MATMUL][ns - 1].speed;
    for (d = 0; d < o.devices; d++) c.speed[d] = speed_top;   /* opaque ops: the largest matmul's */
    /* the executor's own cost per op: dispatch, buffers, bookkeeping (tiny
       ops on every device at once; their 1-element kernel is negligible) */
    if ((rc = dp__cal_overhead(2000, &c, &ovh, err))) goto done;
    for (d = 0; d < o.devices; d++) c.overhead[d] = ovh;
    if ((rc = dp__cal_handoff(&c, &o, a, bufs, S, err))) goto done;
    for (d = 0; d < o.devices; d++) snprintf(c.name[d], 32, "cpu%d", d);
    *out = c;
    memset(&c, 0, sizeof c);
done:
    dp_cluster_free(&c);
    DP_FREE(a); DP_FREE(bufs); DP_FREE(pts); DP_FREE(ca); DP_FREE(th); DP_FREE(secs);
    return rc;
}

DPDEF int dp_calibrate_cpu_speed(const dp_cluster *c, const dp_calibrate_opts *opts, double *factor, dp_error *err)
{
    static const dp_kind probe[2] = { DP_OP_MATMUL, DP_OP_ADD };
    dp_calibrate_opts o;
    dp__calarg *ca = NULL;
    pthread_t *th = NULL;
    float *bufs = NULL;
    double logsum = 0;
    int rc = 0, s, nd, d, j;
    size_t per_dev;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (!factor) return dp__fail(err, DP_ERR_ARG, "calibrate_speed: no factor to write");
    if (!c || c->n < 1 || !c->speed) return dp__fail(err, DP_ERR_ARG, "calibrate_speed: cluster missing or without devices");
    if (o.size == 0) o.size = 512;
    if (o.seconds == 0) o.seconds = 0.005;
    if (o.size < 8 || o.size > 2048) return dp__fail(err, DP_ERR_RANGE, "calibrate_speed: size %d not in 8..2048", o.size);
    if (!(o.seconds > 0 && o.seconds <= 10)) return dp__fail(err, DP_ERR_RANGE, "calibrate_speed: seconds %g not in (0, 10]", o.seconds);
    s = o.size / 2; nd = c->n;
    per_dev = dp__cal_floats(s);
    ca = (dp__calarg *)dp__alloc((size_t)nd, sizeof *ca, err, "calibration");
    th = (pthread_t *)dp__alloc((size_t)nd, sizeof *th, err, "calibration");
    bufs = (float *)dp__alloc(per_dev * nd, sizeof(float), err, "calibration");
    if (!ca || !th || !bufs) { rc = DP_ERR_NOMEM; goto done; }
    for (d = 0; d < nd; d++) dp__cal_prepare(&ca[d], bufs + per_dev * d, s, o.seconds);
    for (j = 0; j < 2 && !rc; j++) {
        dp_graph g;
        double sec = 0, pred = 0;
        int op;
        rc = dp__cal_graph(&g, probe[j], s, &op, err);
        if (!rc) rc = dp__cal_kernel(&g, op, nd, ca, th, &sec, err);
        if (!rc) {
            /* c's prediction for the kernel alone, the mean over devices */
            for (d = 0; d < nd; d++) pred += (dp_op_time(&g, c, op, d) - (c->overhead ? c->overhead[d] : 0)) / nd;
            if (!(pred > 0 && sec > 0)) rc = dp__fail(err, DP_ERR_RANGE, "calibrate_speed: %s predicted %g s, measured %g s", dp_kind_name(probe[j]), pred, sec);
            else logsum += log(pred / sec);
        }
        dp_graph_free(&g);
    }
    if (!rc) *factor = exp(logsum / 2);
done:
    DP_FREE(ca); DP_FREE(th); DP_FREE(bufs);
    return rc;
}

/* ======================================================================
   >>mpi
   The MPI executor (>>api-mpi), compiled only with DP_WITH_MPI. Each
   rank runs the dispatcher (dp__rt_loop) on the whole graph on its
   calling thread, with the hooks below: its own devices' ops go to one
   compute thread per device, which runs them as the CPU executor does
   (dp__cpu_run, the same buffers and pool: a dp__cpux), or, on GPUs
   (DP_MPI_CUDA), to the CUDA executor's hooks (dp__cu_rank from
   doppler_cuda.cu), whose completions dp__mpi_wait polls; other ranks'
   ops and the copies between them are done at once; a copy out of this rank
   is an MPI_Isend, one into it an MPI_Irecv; dp__mpi_wait returns what
   ended, polling MPI.
   Liveness: a rank that waits for another sends every other rank a
   one-byte heartbeat every timeout / 4 and counts any message from a rank
   as a sign of life; it gives up on a rank silent for the timeout. So a
   rank that computes a long op is not taken for a lost one (its
   dispatching thread keeps beating), and one whose process stopped or
   died is found within the timeout.
   Clocks: at the start of a call rank 0 measures every rank's clock
   against its own (the offset at the fastest of 8 round trips, NTP's
   way); a run starts at rank 0's time, sent with the start's agreement,
   so every rank's times are on rank 0's clock.
   Tags: 0 a failure during a run, 1 an agreement, 2 rank 0's heartbeat
   between runs (dp_exec_mpi_beat, on the caller's communicator), 3 a
   heartbeat, 4 the clocks, 5 + e edge e's tensor, 5 + m + v sink v's
   output.
   ====================================================================== */
#ifdef DP_WITH_MPI
enum { DP__MPI_TAG_FAIL = 0, DP__MPI_TAG_AGREE = 1, DP__MPI_TAG_LEAD = 2, DP__MPI_TAG_BEAT = 3, DP__MPI_TAG_CLOCK = 4, DP__MPI_TAG_EDGE = 5 };

/* A failure sent to every other rank during a run; an outcome in an
   agreement (t: rank 0's clock when it answered, a run's start). */
typedef struct dp__mpictl { int code; double t; char msg[sizeof ((dp_error *)0)->msg]; } dp__mpictl;

/* One call's state: the CPU executor's (buffers, pool, results, the
   dispatcher in x.rt, x.mu, x.cv, x.op) and the messages. */
typedef struct dp__mpix {
    dp__cpux x;
    MPI_Comm comm;
    int rank, size;
    unsigned char *remote;     /* [nd] devices of other ranks                 */
    int *rank_of;              /* [nd] the rank that runs each device         */
    pthread_cond_t wake;       /* the dispatching thread's: an op ended       */
    int wake_ok;
    int *fin, fin_head, fin_tail;   /* [n] ops ended on this rank, a queue   */
    int *now, now_head, now_tail;   /* [n + m] completions already there     */
    MPI_Request *req;          /* [m] messages under way                      */
    int *req_edge, nreq, *idx; /* [m] their edges; Testsome's indices         */
    MPI_Status *st;            /* [m]                                         */
    int *paced, npaced;        /* [m] sends held to their modelled arrival:
                                  a heap on (x.rt.arrive, edge)               */
    int running, nlocal;       /* this rank's ops running; its devices         */
    double timeout;            /* seconds a rank may be silent                */
    double last;               /* when the last completion came               */
    double *seen;              /* [size] when a message last came from each   */
    double beat_sent, offset;  /* the last heartbeat; this clock - rank 0's   */
    MPI_Request beat;          /* the posted receive of a heartbeat           */
    int beat_posted;
    char beat_in;
    MPI_Request ctl;           /* the posted receive of a failure             */
    int ctl_posted, from_peer; /* the run failed because another rank did    */
    dp__mpictl ctl_in;
    int quit;
    /* DP_MPI_CUDA: this rank's GPUs (>>internal's dp__cu_rank; cu.x NULL:
       the CPU's compute threads) */
    dp__cu_rank cu;
    unsigned char *here;       /* [nd] devices of this rank: 1             */
    int aware;                 /* GPU tensors sent and received in GPU memory
                                  (CUDA-aware MPI); else staged            */
    int *stg, nstg;            /* [m] sends being staged out of a GPU       */
    int keep_cu;               /* a message MPI may still touch: the GPU's
                                  buffers are kept, not freed              */
} dp__mpix;

typedef struct dp__mpiw { dp__mpix *mx; int dev; } dp__mpiw;

static const char dp__mpi_beat_byte = 1;   /* what a heartbeat carries */

static MPI_Comm dp__mpi_comm(const dp_mpi_opts *mo) { return mo && mo->comm ? *mo->comm : MPI_COMM_WORLD; }

/* An MPI call's failure: DP_ERR_PEER with MPI's own message. */
static int dp__mpi_fail(dp_error *err, int mrc, const char *call)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mrc, s, &len) != MPI_SUCCESS) len = 0;
    s[len] = 0;
    return dp__fail(err, DP_ERR_PEER, "mpi: %s failed: %s (error %d)", call, len ? s : "unknown", mrc);
}

/* Heartbeats at time t: every other rank gets one when timeout / 4 has
   passed since the last; the ones that came mark their senders seen. */
static void dp__mpi_beat(dp__mpix *mx, double t)
{
    int r, flag = 1;
    MPI_Status s;
    if (t - mx->beat_sent >= mx->timeout / 4) {
        for (r = 0; r < mx->size; r++) {
            MPI_Request q;
            if (r == mx->rank || MPI_Isend(&dp__mpi_beat_byte, 1, MPI_BYTE, r, DP__MPI_TAG_BEAT, mx->comm, &q) != MPI_SUCCESS) continue;
            MPI_Request_free(&q);   /* one byte: sent eagerly, nothing to wait for */
        }
        mx->beat_sent = t;
    }
    while (mx->beat_posted && flag) {
        if (MPI_Test(&mx->beat, &flag, &s) != MPI_SUCCESS || !flag) break;
        if (s.MPI_SOURCE >= 0 && s.MPI_SOURCE < mx->size) mx->seen[s.MPI_SOURCE] = t;
        mx->beat_posted = MPI_Irecv(&mx->beat_in, 1, MPI_BYTE, MPI_ANY_SOURCE, DP__MPI_TAG_BEAT, mx->comm, &mx->beat) == MPI_SUCCESS;
    }
}

/* Waits for request r: MPI_Test, yielding the processor for the first
   10 ms, then sleeping 1 ms between tests (sleep_ms: from the start, for
   waits that may be long). Gives up with DP_ERR_PEER naming `peer` (or
   "a rank", -1) at deadline (dp_now seconds; < 0 none) and, with a
   call's state mx and a peer, when that rank has been silent for the
   timeout (heartbeats sent and taken meanwhile; a message from it is a
   sign of life). */
static int dp__mpi_wait_req(MPI_Request *r, dp__mpix *mx, double deadline, int sleep_ms, const char *what, int peer, dp_error *err)
{
    double t0 = dp_now(), t;
    int flag = 0, mrc;
    for (;;) {
        if ((mrc = MPI_Test(r, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, what);
        t = dp_now();
        if (flag) { if (mx && peer >= 0) mx->seen[peer] = t; return 0; }
        if (mx) dp__mpi_beat(mx, t);
        if ((mx && peer >= 0 && t - mx->seen[peer] > mx->timeout) || (deadline >= 0 && t > deadline)) {
            if (peer >= 0) return dp__fail(err, DP_ERR_PEER, "mpi: %s: rank %d did not answer in %.3g s (it died or stopped answering)", what, peer, t - t0);
            return dp__fail(err, DP_ERR_PEER, "mpi: %s: a rank did not answer in %.3g s (it died or stopped answering)", what, t - t0);
        }
        if (sleep_ms || t - t0 > 0.01) {
            struct timespec ts;
            ts.tv_sec = 0; ts.tv_nsec = 1000000L;
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

/* A duplicate of comm that returns errors (the caller's comm is left as
   it is), made without blocking past deadline. */
static int dp__mpi_dup(MPI_Comm comm, MPI_Comm *out, double deadline, int sleep_ms, dp_error *err)
{
    MPI_Request r;
    int mrc, rc;
    *out = MPI_COMM_NULL;
    if ((mrc = MPI_Comm_idup(comm, out, &r)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Comm_idup");
    if ((rc = dp__mpi_wait_req(&r, NULL, deadline, sleep_ms, "making a communicator", -1, err))) return rc;
    if ((mrc = MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Comm_set_errhandler");
    return 0;
}

static void dp__mpi_undup(MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
    *comm = MPI_COMM_NULL;
}

/* In-place Iallreduce of count items, waited for until deadline. */
static int dp__mpi_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, dp__mpix *mx, const char *what, dp_error *err)
{
    MPI_Request r;
    int mrc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, op, mx->comm, &r);
    if (mrc != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Iallreduce");
    return dp__mpi_wait_req(&r, mx, dp_now() + 4 * mx->timeout, 0, what, -1, err);
}

/* dp_mpi_opts.devices (mo may be NULL: the CPU) is one the executor has;
   who names the caller in the message. */
static int dp__mpi_devices_check(const dp_mpi_opts *mo, const char *who, dp_error *err)
{
    if (mo && mo->devices != DP_MPI_CPU && mo->devices != DP_MPI_CUDA)
        return dp__fail(err, DP_ERR_RANGE, "%s: devices %d is neither DP_MPI_CPU (0) nor DP_MPI_CUDA (1)", who, mo->devices);
    return 0;
}

/* "rank R: " before msg, unless it names a rank already. */
static void dp__mpi_prefix(char *out, size_t cap, int rank, const char *msg)
{
    if (!strncmp(msg, "rank ", 5) && strchr(msg, ':')) snprintf(out, cap, "%s", msg);
    else snprintf(out, cap, "rank %d: %s", rank, msg);
}

/* dp_mpi_agree on comm: every rank sends its outcome to rank 0, which
   answers every rank with the lowest failing rank's code and message (its
   rank before it), or with the rank that did not answer: point to point
   rather than collective, so that a missing rank is named. With a call's
   state mx, a rank is waited for while it is alive (see dp__mpi_beat),
   else until deadline; *t0 (may be NULL) gets rank 0's clock when it
   answered. */
static int dp__mpi_agree_on(MPI_Comm comm, dp__mpix *mx, int rc, dp_error *err, double deadline, double *t0)
{
    dp__mpictl mine, *all = NULL;
    MPI_Request *r = NULL, one;
    int rank, size, mrc, i, k = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(&mine, 0, sizeof mine);
    mine.code = rc;
    if (rc) dp__mpi_prefix(mine.msg, sizeof mine.msg, rank, err && err->code ? err->msg : dp_code_text((dp_code)rc));
    if (rank != 0) {
        if ((mrc = MPI_Isend(&mine, (int)sizeof mine, MPI_BYTE, 0, DP__MPI_TAG_AGREE, comm, &one)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Isend");
        if ((k = dp__mpi_wait_req(&one, mx, deadline, 0, "agreeing on the outcome", 0, err))) return k;
        if ((mrc = MPI_Irecv(&mine, (int)sizeof mine, MPI_BYTE, 0, DP__MPI_TAG_AGREE, comm, &one)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Irecv");
        if ((k = dp__mpi_wait_req(&one, mx, deadline, 0, "agreeing on the outcome", 0, err))) {
            MPI_Cancel(&one);
            MPI_Request_free(&one);
            return k;
        }
    } else if (size > 1) {
        all = (dp__mpictl *)dp__alloc((size_t)size, sizeof *all, err, "mpi agreement");
        r = (MPI_Request *)dp__alloc((size_t)size, sizeof *r, err, "mpi agreement");
        if (!all || !r) { DP_FREE(all); DP_FREE(r); return DP_ERR_NOMEM; }
        for (i = 1; i < size; i++) r[i] = MPI_REQUEST_NULL;
        for (i = 1; i < size && !k; i++)
            if ((mrc = MPI_Irecv(&all[i], (int)sizeof *all, MPI_BYTE, i, DP__MPI_TAG_AGREE, comm, &r[i])) != MPI_SUCCESS) k = dp__mpi_fail(err, mrc, "MPI_Irecv");
        for (i = 1; i < size && !k; i++) k = dp__mpi_wait_req(&r[i], mx, deadline, 0, "agreeing on the outcome", i, err);
        for (i = 1; i < size; i++) if (r[i] != MPI_REQUEST_NULL) { MPI_Cancel(&r[i]); MPI_Request_free(&r[i]); }
        if (k && !mine.code) {
            /* the rank that did not answer, unless rank 0 failed itself:
               every rank that did answer is told */
            mine.code = k;
            snprintf(mine.msg, sizeof mine.msg, "%s", err ? err->msg : dp_code_text((dp_code)k));
        } else if (!mine.code) {
            for (i = 1; i < size && !mine.code; i++) if (all[i].code) mine = all[i];
        }
        mine.t = dp_now();
        for (i = 1; i < size; i++) {
            if (MPI_Isend(&mine, (int)sizeof mine, MPI_BYTE, i, DP__MPI_TAG_AGREE, comm, &r[i]) != MPI_SUCCESS) continue;
            if (dp__mpi_wait_req(&r[i], NULL, dp_now() + 1.0, 0, "agreeing on the outcome", i, NULL)) { MPI_Cancel(&r[i]); MPI_Request_free(&r[i]); }
        }
        DP_FREE(all); DP_FREE(r);
    } else {
        mine.t = dp_now();
    }
    if (t0) *t0 = mine.t;
    if (!mine.code) return 0;
    mine.msg[sizeof mine.msg - 1] = 0;
    return dp__fail(err, mine.code > 0 && mine.code < DP_CODE__COUNT ? (dp_code)mine.code : DP_ERR_PEER, "%s", mine.msg);
}

DPDEF int dp_mpi_agree(int rc, dp_error *err, const dp_mpi_opts *mo)
{
    MPI_Comm comm;
    double deadline = dp_now() + (mo && mo->timeout > 0 ? mo->timeout : 60.0);
    dp_error mine;
    int k;
    mine.code = DP_OK; mine.msg[0] = 0;
    if (rc && err) mine = *err;
    if ((k = dp__mpi_dup(dp__mpi_comm(mo), &comm, deadline, 0, err))) return k;
    if (!rc) dp__ok(err);
    else if (err) *err = mine;
    k = dp__mpi_agree_on(comm, NULL, rc, err, deadline, NULL);
    dp__mpi_undup(&comm);
    return k;
}

/* ---- what every rank must agree on: hashes --------------------------- */
static uint64_t dp__mpi_h(const void *p, size_t bytes, uint64_t h)
{
    h = dp__cpu_hash((const unsigned char *)&bytes, sizeof bytes, h);
    return p && bytes ? dp__cpu_hash((const unsigned char *)p, bytes, h) : h;
}

/* Hashes of the graph, the cluster, the assignment and the options. */
static void dp__mpi_hashes(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *o, uint64_t *h)
{
    size_t n = (size_t)g->n_ops, m = (size_t)g->n_edges, nd = (size_t)c->n, v, k;
    int have_prio = o->priority != NULL;
    uint64_t x = 0xcbf29ce484222325ULL;
    x = dp__mpi_h(g->kind, n * sizeof *g->kind, x); x = dp__mpi_h(g->compute, n * sizeof(double), x);
    x = dp__mpi_h(g->out_bytes, n * sizeof(double), x); x = dp__mpi_h(g->mem_bytes, n * sizeof(double), x);
    x = dp__mpi_h(g->resident, n * sizeof(double), x); x = dp__mpi_h(g->rows, n * sizeof(int), x);
    x = dp__mpi_h(g->cols, n * sizeof(int), x); x = dp__mpi_h(g->arg, n * sizeof(int), x);
    x = dp__mpi_h(g->dev_time, n * (size_t)g->n_dev_time * sizeof(double), x);
    x = dp__mpi_h(g->src, m * sizeof(int), x); x = dp__mpi_h(g->dst, m * sizeof(int), x); x = dp__mpi_h(g->bytes, m * sizeof(double), x);
    x = dp__mpi_h(g->weight_bytes, (size_t)g->n_weights * sizeof(double), x);
    x = dp__mpi_h(g->use_op, (size_t)g->n_uses * sizeof(int), x); x = dp__mpi_h(g->use_weight, (size_t)g->n_uses * sizeof(int), x);
    for (v = 0; v < n; v++) x = dp__mpi_h(g->name[v], strlen(g->name[v]), x);
    h[0] = x;
    x = dp__mpi_h(&c->link, sizeof c->link, 0xcbf29ce484222325ULL);
    x = dp__mpi_h(c->speed, nd * sizeof(double), x); x = dp__mpi_h(c->kind_speed, nd * DP_KIND__COUNT * sizeof(double), x);
    x = dp__mpi_h(c->memory, nd * sizeof(double), x); x = dp__mpi_h(c->bandwidth, nd * nd * sizeof(double), x);
    x = dp__mpi_h(c->latency, nd * nd * sizeof(double), x); x = dp__mpi_h(c->overhead, nd * sizeof(double), x);
    x = dp__mpi_h(c->node, nd * sizeof(int), x);
    if (c->curve_len)
        for (k = 0; k < nd * DP_KIND__COUNT; k++)
            x = dp__mpi_h(c->curve + k * DP_MAX_CURVE, (size_t)c->curve_len[k] * sizeof(dp_speed_point), x);
    h[1] = x;
    h[2] = dp__mpi_h(assign, n * sizeof(int), 0xcbf29ce484222325ULL);
    x = dp__mpi_h(&o->order, sizeof o->order, 0xcbf29ce484222325ULL);
    x = dp__mpi_h(&have_prio, sizeof have_prio, x);
    if (have_prio) x = dp__mpi_h(o->priority, n * sizeof(double), x);
    x = dp__mpi_h(&o->reps, sizeof o->reps, x); x = dp__mpi_h(&o->seconds_per_unit, sizeof(double), x);
    x = dp__mpi_h(&o->bytes_scale, sizeof(double), x); x = dp__mpi_h(&o->device_bytes, sizeof(double), x);
    x = dp__mpi_h(&o->seed, sizeof o->seed, x); x = dp__mpi_h(&o->keep_outputs, sizeof(int), x);
    x = dp__mpi_h(&o->cpu_times, sizeof(int), x);
    {   /* what a rank's devices are, and how GPUs run */
        int dev[4];
        dev[0] = o->mpi ? o->mpi->devices : 0; dev[1] = (int)o->precision; dev[2] = o->gpus; dev[3] = o->link_pacing;
        x = dp__mpi_h(dev, sizeof dev, x);
    }
    h[3] = x;
}

/* The hashes of every rank against rank 0's: the same message on every
   rank when one differs. */
static int dp__mpi_same_inputs(MPI_Comm comm, const uint64_t *h, double deadline, dp_error *err)
{
    static const char *what[4] = { "graph", "cluster", "assignment", "options (order, priority, reps, scales, seed, devices, precision, gpus, link pacing)" };
    MPI_Request r;
    uint64_t *all;
    int rank, size, mrc, rc, i, k;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!(all = (uint64_t *)dp__alloc((size_t)size * 4, sizeof(uint64_t), err, "mpi input check"))) return DP_ERR_NOMEM;
    memcpy(all + 4 * (size_t)rank, h, 4 * sizeof(uint64_t));
    mrc = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 4, MPI_UINT64_T, comm, &r);
    rc = mrc != MPI_SUCCESS ? dp__mpi_fail(err, mrc, "MPI_Iallgather") : dp__mpi_wait_req(&r, NULL, deadline, 0, "comparing inputs", -1, err);
    for (i = 1; i < size && !rc; i++)
        for (k = 0; k < 4 && !rc; k++)
            if (all[4 * (size_t)i + k] != all[k])
                rc = dp__fail(err, DP_ERR_ARG, "exec (mpi): rank %d's %s differs from rank 0's (hash %016llx against %016llx): every rank must read the same graph, cluster and assignment with the same options",
                              i, what[k], (unsigned long long)all[4 * (size_t)i + k], (unsigned long long)all[k]);
    DP_FREE(all);
    return rc;
}

/* ---- the hooks ------------------------------------------------------- */
static double dp__mpi_now(void *ctx) { (void)ctx; return dp_now(); }

/* Op v on device d: this rank's goes to d's compute thread (its output
   buffer first); another rank's is done at once. */
static int dp__mpi_launch(void *ctx, int v, int d, dp_error *err)
{
    dp__mpix *mx = (dp__mpix *)ctx;
    dp__cpux *x = &mx->x;
    size_t size = x->rt.obytes[v];
    if (mx->remote[d]) { mx->now[mx->now_tail++] = v; return 0; }
    if (mx->cu.x) return mx->cu.h.launch(mx->cu.x, v, d, err);
    if (!(x->buf[v] = dp__cpu_alloc(x, d, size)))
        return dp__fail(err, DP_ERR_NOMEM, "exec (mpi): device %d: out of memory allocating %zu bytes for op %d", d, size, v);
    x->len[v] = size;
    x->op[d] = v;
    mx->running++;
    pthread_cond_signal(&x->cv[d]);
    return 0;
}

/* Edge e's send from the producer's output (the bytes it has: the
   receiver zeroes the rest, as the CPU executor's copy does): on a GPU,
   its output buffer there (CUDA-aware MPI) or the edge's staging buffer
   (staged out by then). */
static int dp__mpi_send(dp__mpix *mx, int e, dp_error *err)
{
    dp__cpux *x = &mx->x;
    int u = x->g->src[e], mrc;
    size_t size = x->rt.ebytes[e] < x->rt.obytes[u] ? x->rt.ebytes[e] : x->rt.obytes[u];
    const void *p = x->buf[u];
    if (mx->cu.x) p = mx->aware ? mx->cu.out(mx->cu.x, u) : mx->cu.stage(mx->cu.x, e);
    mrc = MPI_Isend(p, (int)size, MPI_BYTE, mx->rank_of[x->assign[x->g->dst[e]]], DP__MPI_TAG_EDGE + e, mx->comm, &mx->req[mx->nreq]);
    if (mrc != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Isend");
    mx->req_edge[mx->nreq++] = e;
    return 0;
}

/* Edge e's tensor ready to leave this rank: sent now out of a real op,
   at its modelled arrival out of an opaque one. */
static int dp__mpi_out(dp__mpix *mx, int e, dp_error *err)
{
    if (dp__is_real(mx->x.g, mx->x.g->src[e])) return dp__mpi_send(mx, e, err);
    DP__HEAP_PUSH(int, mx->paced, mx->npaced, e, dp__dl_before, &mx->x.rt);
    return 0;
}

/* Edge e's receive into p (its copy buffer, a GPU's or its staging one). */
static int dp__mpi_recv(dp__mpix *mx, int e, void *p, dp_error *err)
{
    dp__cpux *x = &mx->x;
    int mrc = MPI_Irecv(p, (int)x->rt.ebytes[e], MPI_BYTE, mx->rank_of[x->assign[x->g->src[e]]], DP__MPI_TAG_EDGE + e, mx->comm, &mx->req[mx->nreq]);
    if (mrc != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Irecv");
    mx->req_edge[mx->nreq++] = e;
    return 0;
}

/* Edge e's copy: between two other ranks' devices, done; out of this
   rank, sent (out of an opaque op, at its modelled arrival; out of a GPU
   without CUDA-aware MPI, once staged into host memory); into it, a
   buffer on the consumer's device (or its staging buffer), then received
   into it, or, from a device of this rank, copied at once (on GPUs, the
   CUDA executor's copy). */
static int dp__mpi_copy(void *ctx, int e, dp_error *err)
{
    dp__mpix *mx = (dp__mpix *)ctx;
    dp__cpux *x = &mx->x;
    const dp_graph *g = x->g;
    int u = g->src[e], d = x->assign[u], dd = x->assign[g->dst[e]], rc;
    size_t size = x->rt.ebytes[e];
    if (mx->remote[dd]) {
        if (mx->remote[d]) { mx->now[mx->now_tail++] = -1 - e; return 0; }
        if (mx->cu.x && !mx->aware) {   /* dp__mpi_wait sends it once staged */
            if ((rc = mx->cu.send_stage(mx->cu.x, e, err))) return rc;
            mx->stg[mx->nstg++] = e;
            return 0;
        }
        return dp__mpi_out(mx, e, err);
    }
    if (mx->cu.x) {
        void *p = NULL;
        if (!mx->remote[d]) return mx->cu.h.copy(mx->cu.x, e, err);
        if (!mx->aware) p = mx->cu.stage(mx->cu.x, e);
        else if ((rc = mx->cu.recv(mx->cu.x, e, &p, err))) return rc;
        return dp__mpi_recv(mx, e, p, err);
    }
    if (!(x->xbuf[e] = dp__cpu_alloc(x, dd, size)))
        return dp__fail(err, DP_ERR_NOMEM, "exec (mpi): device %d: out of memory allocating %zu bytes for copy of edge %d", dd, size, e);
    if (!mx->remote[d]) {
        size_t have = x->len[u];
        memcpy(x->xbuf[e], x->buf[u], size < have ? size : have);
        if (size > have) memset(x->xbuf[e] + have, 0, size - have);
        mx->now[mx->now_tail++] = -1 - e;
        return 0;
    }
    return dp__mpi_recv(mx, e, x->xbuf[e], err);
}

static int dp__mpi_release(void *ctx, int op, int e, dp_error *err)
{
    dp__mpix *mx = (dp__mpix *)ctx;
    dp__cpux *x = &mx->x;
    int d = op >= 0 ? x->assign[op] : x->assign[x->g->dst[e]];
    if (mx->remote[d]) return 0;
    if (mx->cu.x) return mx->cu.h.release(mx->cu.x, op, e, err);
    if (op >= 0) dp__cpu_free(x, d, &x->buf[op], x->len[op]);
    else dp__cpu_free(x, d, &x->xbuf[e], x->rt.ebytes[e]);
    return 0;
}

/* The peer at the other end of message k of the run. */
static int dp__mpi_peer(const dp__mpix *mx, int k)
{
    const dp_graph *g = mx->x.g;
    int e = mx->req_edge[k], recv = !mx->remote[mx->x.assign[g->dst[e]]];
    return mx->rank_of[mx->x.assign[recv ? g->src[e] : g->dst[e]]];
}

/* The messages that have completed by time t, into done (a receive of
   fewer bytes than its buffer has the rest zeroed; its peer seen). A
   receive into a GPU is done once its tensor is there: arrived copies it
   (from its staging buffer) and wait returns it. */
static int dp__mpi_test(dp__mpix *mx, double t, int *done, int *count, dp_error *err)
{
    dp__cpux *x = &mx->x;
    int out = 0, i, k, rc = 0, mrc = MPI_Testsome(mx->nreq, mx->req, &out, mx->idx, mx->st);
    if (mrc != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Testsome");
    if (out == MPI_UNDEFINED || out == 0) return 0;
    for (i = 0; i < out; i++) {
        int e = mx->req_edge[mx->idx[i]], got = 0;
        mx->seen[dp__mpi_peer(mx, mx->idx[i])] = t;
        if (!mx->remote[x->assign[x->g->dst[e]]]) {
            size_t size = x->rt.ebytes[e];
            if (MPI_Get_count(&mx->st[i], MPI_BYTE, &got) != MPI_SUCCESS || got < 0) got = 0;
            if (mx->cu.x) {
                if (!rc) rc = mx->cu.arrived(mx->cu.x, e, (size_t)got, err);
                continue;
            }
            if ((size_t)got < size) memset(x->xbuf[e] + got, 0, size - (size_t)got);
        }
        done[(*count)++] = -1 - e;
    }
    for (i = k = 0; i < mx->nreq; i++)
        if (mx->req[i] != MPI_REQUEST_NULL) { mx->req[k] = mx->req[i]; mx->req_edge[k++] = mx->req_edge[i]; }
    mx->nreq = k;
    return rc;
}

/* Sends staged out of a GPU whose copy to the host is done: out (now, or
   at their modelled arrival). */
static int dp__mpi_staged(dp__mpix *mx, dp_error *err)
{
    int i, k, rc = 0;
    for (i = k = 0; i < mx->nstg; i++) {
        int e = mx->stg[i], ready = 0;
        if (!rc && !(rc = mx->cu.ready(mx->cu.x, e, &ready, err)) && ready) rc = dp__mpi_out(mx, e, err);
        else mx->stg[k++] = e;
    }
    mx->nstg = k;
    return rc;
}

/* A message awaited from a rank silent for the timeout: DP_ERR_PEER
   naming it and the edge; 0 when every awaited rank is alive. */
static int dp__mpi_stuck(dp__mpix *mx, double t, dp_error *err)
{
    const dp_graph *g = mx->x.g;
    int k, stale = 0;
    /* every poll comes here: the ranks first (few), the messages (many,
       posted ahead) only when one rank is silent */
    for (k = 0; k < mx->size && !stale; k++) stale = k != mx->rank && t - mx->seen[k] > mx->timeout;
    if (!stale) return 0;
    for (k = 0; k < mx->nreq; k++) {
        int p = dp__mpi_peer(mx, k), e = mx->req_edge[k], u = g->src[e], v = g->dst[e];
        if (t - mx->seen[p] <= mx->timeout) continue;
        return dp__fail(err, DP_ERR_PEER, "exec (mpi): rank %d waited for rank %d to %s edge %d ('%s' -> '%s'), and rank %d has been silent for %.3g s: it died or stopped answering (dp_mpi_opts.timeout %.3g s)",
                        mx->rank, p, mx->remote[mx->x.assign[v]] ? "receive" : "send", e, g->name[u], g->name[v], p, t - mx->seen[p], mx->timeout);
    }
    return 0;
}

/* The dispatcher's wait, on the calling thread under x.mu: completions
   already there, ops this rank's threads ended, sends whose modelled
   arrival has come, messages done; a failure another rank sent ends the
   run. Between polls: the processor yielded while a device of this rank
   is idle and messages are awaited (one may let it start), else a sleep
   on the threads' condition variable (woken by an op's end) of 2 ms at
   most, or until the deadline or the next paced send: polling while every
   device computes would only take their processors (on our 2-core
   machine, polling every 50 us then made the ops 50% slower; every
   200 us, 17%; bench/RESULTS.md part 11). */
static int dp__mpi_wait(void *ctx, double deadline, int *done, int max, int *count, dp_error *err)
{
    dp__mpix *mx = (dp__mpix *)ctx;
    dp__cpux *x = &mx->x;
    int rc, flag, n = x->n;
    *count = 0;
    for (;;) {
        double t, until;
        while (mx->now_head < mx->now_tail && *count < max) done[(*count)++] = mx->now[mx->now_head++];
        while (mx->fin_head < mx->fin_tail && *count < max) done[(*count)++] = mx->fin[mx->fin_head++ % n];
        if (mx->cu.x) {   /* the GPUs' ops and copies that ended (a poll), staged sends */
            int k = 0;
            if (*count < max && (rc = mx->cu.h.wait(mx->cu.x, 0.0, done + *count, max - *count, &k, err))) return rc;
            *count += k;
            if (mx->nstg && (rc = dp__mpi_staged(mx, err))) return rc;
        }
        t = dp_now();
        while (mx->npaced > 0 && x->rt.arrive[mx->paced[0]] <= t) {
            int e;
            DP__HEAP_POP(int, mx->paced, mx->npaced, e, dp__dl_before, &x->rt);
            if ((rc = dp__mpi_send(mx, e, err))) return rc;
        }
        if (mx->nreq > 0 && *count + mx->nreq <= max && (rc = dp__mpi_test(mx, t, done, count, err))) return rc;
        if (mx->ctl_posted) {
            if ((rc = MPI_Test(&mx->ctl, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return dp__mpi_fail(err, rc, "MPI_Test");
            if (flag) {
                mx->ctl_posted = 0; mx->from_peer = 1;
                mx->ctl_in.msg[sizeof mx->ctl_in.msg - 1] = 0;
                return dp__fail(err, mx->ctl_in.code > 0 && mx->ctl_in.code < DP_CODE__COUNT ? (dp_code)mx->ctl_in.code : DP_ERR_PEER, "%s", mx->ctl_in.msg);
            }
        }
        if (*count > 0) { mx->last = t; return 0; }
        if (deadline >= 0 && t >= deadline) return 0;
        dp__mpi_beat(mx, t);
        if ((rc = dp__mpi_stuck(mx, t, err))) return rc;
        if (mx->cu.x || (mx->nreq > 0 && mx->running < mx->nlocal)) {   /* GPUs: polled, as dp_exec_cuda's wait */
            pthread_mutex_unlock(&x->mu);
            sched_yield();
            pthread_mutex_lock(&x->mu);
            continue;
        }
        until = t + 2e-3;
        if (deadline >= 0 && deadline < until) until = deadline;
        if (mx->npaced > 0 && x->rt.arrive[mx->paced[0]] < until) until = x->rt.arrive[mx->paced[0]];
        {
            struct timespec ts;
            ts.tv_sec = (time_t)until;
            ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
            if (mx->fin_head == mx->fin_tail) pthread_cond_timedwait(&mx->wake, &x->mu, &ts);
        }
    }
}

/* A compute thread of one of this rank's devices: runs each op launched
   there (dp__cpu_run releases x.mu meanwhile), queues its end and wakes
   the dispatching thread. */
static void *dp__mpi_worker(void *arg)
{
    dp__mpiw *w = (dp__mpiw *)arg;
    dp__mpix *mx = w->mx;
    dp__cpux *x = &mx->x;
    int d = w->dev;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        int v;
        while (!mx->quit && x->op[d] < 0) pthread_cond_wait(&x->cv[d], &x->mu);
        if (mx->quit) break;
        v = x->op[d];
        x->op[d] = -1;
        dp__cpu_run(x, v, d);
        mx->fin[mx->fin_tail++ % x->n] = v;
        mx->running--;
        pthread_cond_signal(&mx->wake);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* After a failed run: the failure to every other rank (unless it came
   from one), then the messages under way cancelled; a send that cannot
   be cancelled keeps its buffer (not freed: MPI may still read it). */
static void dp__mpi_abandon(dp__mpix *mx, int rc, const dp_error *err)
{
    dp__cpux *x = &mx->x;
    int i;
    if (!mx->from_peer) {
        dp__mpictl out;
        MPI_Request *r = (MPI_Request *)DP_MALLOC(sizeof(MPI_Request) * (size_t)mx->size);
        memset(&out, 0, sizeof out);
        out.code = rc;
        dp__mpi_prefix(out.msg, sizeof out.msg, mx->rank, err ? err->msg : dp_code_text((dp_code)rc));
        for (i = 0; r && i < mx->size; i++) {
            r[i] = MPI_REQUEST_NULL;
            if (i != mx->rank) MPI_Isend(&out, (int)sizeof out, MPI_BYTE, i, DP__MPI_TAG_FAIL, mx->comm, &r[i]);
        }
        for (i = 0; r && i < mx->size; i++) {
            dp_error ignore;
            if (r[i] != MPI_REQUEST_NULL && dp__mpi_wait_req(&r[i], mx, dp_now() + 1.0, 0, "failure notice", i, &ignore)) MPI_Request_free(&r[i]);
        }
        DP_FREE(r);
    }
    for (i = 0; i < mx->nreq; i++) {
        int e = mx->req_edge[i], flag = 0;
        double t = dp_now();
        MPI_Cancel(&mx->req[i]);
        while (!flag && dp_now() - t < 0.1) { MPI_Test(&mx->req[i], &flag, MPI_STATUS_IGNORE); dp__mpi_beat(mx, dp_now()); }
        if (flag) continue;
        MPI_Request_free(&mx->req[i]);
        if (mx->cu.x) mx->keep_cu = 1;   /* a GPU's buffers: all kept */
        else if (mx->remote[x->assign[x->g->dst[e]]]) x->buf[x->g->src[e]] = NULL;   /* a send's source: kept */
        else x->xbuf[e] = NULL;
    }
    mx->nreq = 0;
}

/* ---- dp_exec_mpi ------------------------------------------------------ */
/* The clocks of the ranks against rank 0's: for each rank, 8 round trips
   (rank 0's time out, the rank's back), the fastest one's midpoint
   against the rank's time; each rank gets its own offset. */
static int dp__mpi_clocks(dp__mpix *mx, dp_error *err)
{
    MPI_Request q;
    double t[2], best = HUGE_VAL, off = 0;
    int r, i, k, rc = 0;
    for (r = 1; r < mx->size && !rc; r++) {
        if (mx->rank != 0 && mx->rank != r) continue;
        for (i = 0; i < 8 && !rc; i++)
            for (k = 0; k < 2 && !rc; k++) {
                int send = (k == 0) == (mx->rank == 0), peer = mx->rank ? 0 : r;
                if (send) t[0] = dp_now();
                if ((send ? MPI_Isend(t, 1, MPI_DOUBLE, peer, DP__MPI_TAG_CLOCK, mx->comm, &q)
                          : MPI_Irecv(t + 1, 1, MPI_DOUBLE, peer, DP__MPI_TAG_CLOCK, mx->comm, &q)) != MPI_SUCCESS)
                    rc = dp__fail(err, DP_ERR_PEER, "mpi: measuring the clocks failed");
                else rc = dp__mpi_wait_req(&q, mx, -1, 0, "measuring the clocks", peer, err);
                if (!rc && mx->rank == 0 && k == 1) {
                    double now = dp_now();
                    if (now - t[0] < best) { best = now - t[0]; off = t[1] - (t[0] + now) / 2; }
                }
            }
        if (rc) break;
        if (mx->rank == 0) {
            best = HUGE_VAL;
            if (MPI_Isend(&off, 1, MPI_DOUBLE, r, DP__MPI_TAG_CLOCK, mx->comm, &q) != MPI_SUCCESS) rc = dp__fail(err, DP_ERR_PEER, "mpi: measuring the clocks failed");
        } else if (MPI_Irecv(&mx->offset, 1, MPI_DOUBLE, 0, DP__MPI_TAG_CLOCK, mx->comm, &q) != MPI_SUCCESS) {
            rc = dp__fail(err, DP_ERR_PEER, "mpi: measuring the clocks failed");
        }
        if (!rc) rc = dp__mpi_wait_req(&q, mx, -1, 0, "measuring the clocks", mx->rank ? 0 : r, err);
    }
    return dp__mpi_agree_on(mx->comm, mx, rc, err, -1, NULL);
}

/* This rank's checks: dp_exec_cpu's, then the ranks against the nodes
   and MPI's limits on tags and counts. */
static int dp__mpi_args(const dp_graph *g, const dp_cluster *c, const int *assign, dp_exec_opts *o,
                        const dp_exec_result *res, int size, dp_error *err)
{
    int rc, d, nodes = 1, e, v, *ub = NULL, flag = 0;
    int gpu = o->mpi && o->mpi->devices == DP_MPI_CUDA;
    if ((rc = dp__exec_args(g, c, assign, o, res, "exec (mpi)", err))) return rc;
    if ((rc = dp__mpi_devices_check(o->mpi, "exec (mpi)", err))) return rc;
    if (o->mpi && o->mpi->gpu_direct != 0 && o->mpi->gpu_direct != -1)
        return dp__fail(err, DP_ERR_RANGE, "exec (mpi): gpu_direct %d is neither 0 (where MPI is CUDA-aware) nor -1 (always staged)", o->mpi->gpu_direct);
#ifndef DP_WITH_CUDA
    if (gpu) return dp__fail(err, DP_ERR_ARG, "exec (mpi): devices DP_MPI_CUDA: this program was built without DP_WITH_CUDA (the MPI executor's GPUs need doppler_cuda.cu linked in; see >>api-mpi)");
#endif
    if (!gpu && o->precision != DP_PREC_DEFAULT && o->precision != DP_PREC_FP32)   /* FP32 only */
        return dp__fail(err, DP_ERR_ARG, "exec (mpi): precision %s: the MPI executor computes in fp32 only on CPUs (tf32 and bf16: the CPU and CUDA executors, or the MPI executor's GPUs)", dp_precision_name((int)o->precision));
    if (o->dispatch != DP_DISPATCH_DYNAMIC)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi): dispatch %d: the MPI executor dispatches dynamically only", (int)o->dispatch);
    if (o->mpi && !(o->mpi->timeout >= 0 && o->mpi->timeout < 1e9))
        return dp__fail(err, DP_ERR_RANGE, "exec (mpi): timeout %g s not in [0, 1e9)", o->mpi->timeout);
    for (d = 0; d < c->n; d++) if (c->node && c->node[d] + 1 > nodes) nodes = c->node[d] + 1;
    if (nodes != size)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi): the cluster has %d node%s but the run has %d rank%s: one rank per node (mpirun -np %d; a cluster file's 'nodes K', --machines K)",
                        nodes, nodes == 1 ? "" : "s", size, size == 1 ? "" : "s", nodes);
    MPI_Comm_get_attr(dp__mpi_comm(o->mpi), MPI_TAG_UB, &ub, &flag);
    if (flag && ub && (long long)g->n_edges + g->n_ops + DP__MPI_TAG_EDGE > (long long)*ub)
        return dp__fail(err, DP_ERR_LIMIT, "exec (mpi): %d edges and %d ops need tags up to %lld, past this MPI's MPI_TAG_UB %d", g->n_edges, g->n_ops, (long long)g->n_edges + g->n_ops + DP__MPI_TAG_EDGE, *ub);
    for (e = 0; e < g->n_edges; e++)
        if (dp_exec_edge_bytes(g, e, o->bytes_scale) > (size_t)INT_MAX)
            return dp__fail(err, DP_ERR_LIMIT, "exec (mpi): edge %d carries %zu bytes, more than one MPI message takes (INT_MAX)", e, dp_exec_edge_bytes(g, e, o->bytes_scale));
    for (v = 0; v < g->n_ops; v++)
        if (dp_exec_op_bytes(g, v, o->bytes_scale) > (size_t)INT_MAX)
            return dp__fail(err, DP_ERR_LIMIT, "exec (mpi): op %d's output is %zu bytes, more than one MPI message takes (INT_MAX)", v, dp_exec_op_bytes(g, v, o->bytes_scale));
    return 0;
}

/* The call's buffers (one block, x.arena: the CPU executor's that its
   kernels use, the messages', every run's results), the resident bytes
   and the pool of this rank's devices, the locks, and one compute thread
   per device of this rank; or, with DP_MPI_CUDA, the CUDA executor's
   machinery for them (dp__cu_rank_open: staging buffers unless MPI is
   CUDA-aware, MPIX_Query_cuda_support where mpi-ext.h declares it). */
static int dp__mpi_setup(dp__mpix *mx, const dp_exec_opts *o, double **runs, dp__mpiw **wk, pthread_t **th, unsigned char *started, dp_error *err)
{
    dp__cpux *x = &mx->x;
    dp__arena ar;
    pthread_condattr_t ca;
    int rc, pass, d, n = x->n, m = x->m, nd = x->nd, R = o->reps;
    size_t per_run = 3 * (size_t)n + 2 * (size_t)nd;
    memset(&ar, 0, sizeof ar);
    if ((rc = dp__rt_init(&x->rt, x->g, x->c, NULL, NULL, o, err))) return rc;
    for (pass = 0; pass < 2; pass++) {
        if (pass && (rc = dp__arena_alloc(&ar, &x->arena, err, "executor (mpi)"))) return rc;
        DP__A(x->cv, nd, pthread_cond_t); DP__A(x->xcv, nd, pthread_cond_t); DP__A(x->op, nd, int);
        DP__A(x->inp, (size_t)m + 1, const float *);
        DP__A(x->buf, n, unsigned char *); DP__A(x->xbuf, (size_t)m + 1, unsigned char *); DP__A(x->len, n, size_t);
        DP__A(x->dig, n, uint64_t); DP__A(x->sizes, (size_t)n + m, size_t);
        DP__A(x->start, n, double); DP__A(x->end, n, double); DP__A(x->busy, nd, double); DP__A(x->cpu, n, double);
        DP__A(x->resbuf, nd, unsigned char *);
        DP__A(mx->remote, nd, unsigned char); DP__A(mx->rank_of, nd, int);
        DP__A(mx->fin, n, int); DP__A(mx->now, (size_t)n + m, int);
        DP__A(mx->req, (size_t)m + 1, MPI_Request); DP__A(mx->req_edge, (size_t)m + 1, int); DP__A(mx->idx, (size_t)m + 1, int);
        DP__A(mx->st, (size_t)m + 1, MPI_Status); DP__A(mx->paced, (size_t)m + 1, int); DP__A(mx->seen, mx->size, double);
        DP__A(mx->here, nd, unsigned char); DP__A(mx->stg, (size_t)m + 1, int);
        DP__A(*runs, per_run * R, double);
        DP__A(*wk, nd, dp__mpiw); DP__A(*th, nd, pthread_t);
    }
    for (d = 0; d < nd; d++) {
        mx->rank_of[d] = x->c->node ? x->c->node[d] : 0;
        mx->remote[d] = mx->rank_of[d] != mx->rank;
        mx->here[d] = !mx->remote[d];
        mx->nlocal += !mx->remote[d];
    }
    x->rt.remote = mx->remote;
    dp__rt_plan(&x->rt, x->assign, o->order, o->priority);
    if ((rc = dp__rt_resident_fits(&x->rt, err))) return rc;
    if (o->mpi && o->mpi->devices == DP_MPI_CUDA) {
#ifdef DP_WITH_CUDA
#if defined(MPIX_CUDA_AWARE_SUPPORT)
        mx->aware = o->mpi->gpu_direct >= 0 && MPIX_Query_cuda_support() == 1;
#endif
        if ((rc = dp__cu_rank_open(&mx->cu, x->g, x->c, x->assign, mx->here, o, !mx->aware, err))) return rc;
#endif
    }
    for (d = 0; d < nd && !mx->cu.x; d++) {
        size_t rb = (size_t)x->rt.resid[d];
        if (rb == 0 || mx->remote[d]) continue;
        if (!(x->resbuf[d] = (unsigned char *)DP_MALLOC(rb))) return dp__fail(err, DP_ERR_NOMEM, "exec (mpi): device %d: out of memory allocating its %zu resident bytes", d, rb);
        memset(x->resbuf[d], 0, rb);
    }
    if ((!mx->cu.x && (rc = dp__cpu_pool_init(x, err))) || (rc = dp__cpu_sync_init(x, err))) return rc;
    if (pthread_condattr_init(&ca) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec (mpi): cannot create a condition variable");
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&mx->wake, &ca) == 0) mx->wake_ok = 1;
    pthread_condattr_destroy(&ca);
    if (!mx->wake_ok) return dp__fail(err, DP_ERR_NOMEM, "exec (mpi): cannot create a condition variable");
    for (d = 0; d < nd; d++) x->op[d] = -1;
    for (d = 0; d < nd && !mx->cu.x; d++) {
        if (mx->remote[d]) continue;
        (*wk)[d].mx = mx; (*wk)[d].dev = d;
        if (pthread_create(&(*th)[d], NULL, dp__mpi_worker, &(*wk)[d]) != 0) return dp__fail(err, DP_ERR_NOMEM, "exec (mpi): cannot start a worker thread");
        started[d] = 1;
    }
    return 0;
}

/* Run r: after a barrier, the dispatcher's loop; after a failure, every
   rank told and the messages under way cancelled; then the ranks agree on
   the outcome, and each run's times (start, end, cpu of every op; busy and
   peak of every device; each from the rank that ran it), wall time (the
   latest end over the ranks) and digest are made whole on every rank. On
   GPUs the ops' times are their kernels' stamps (seconds from the GPUs'
   start stamps, made just before the barrier, placed on the host's clock
   by dp_now() read right after them), the digest dp_exec_cuda's (every
   sink's output hash, in op order) and keep (NULL, or the last run's
   res->outputs, this rank's real sinks' allocated) gets the outputs. */
static int dp__mpi_run(dp__mpix *mx, int r, double *runs, double *wall, uint64_t *digest, float **keep, dp_error *err)
{
    dp__cpux *x = &mx->x;
    const dp_graph *g = x->g;
    int n = x->n, nd = x->nd, rc, k, v, d;
    double *out = runs + (3 * (size_t)n + 2 * (size_t)nd) * r, t0 = 0, tg = 0;
    uint64_t dg = 0xcbf29ce484222325ULL;
    dp_dispatch_hooks h;
    h.ctx = mx; h.now = dp__mpi_now; h.launch = dp__mpi_launch; h.copy = dp__mpi_copy; h.release = dp__mpi_release; h.wait = dp__mpi_wait;
    rc = mx->cu.x ? mx->cu.begin(mx->cu.x, &tg, err) : 0;
    if ((rc = dp__mpi_agree_on(mx->comm, mx, rc, err, -1, &t0))) return rc;   /* the start: all there */
    pthread_mutex_lock(&x->mu);
    for (d = 0; d < nd; d++) { x->op[d] = -1; x->busy[d] = 0; }
    for (v = 0; v < n; v++) { x->start[v] = x->end[v] = x->cpu[v] = 0; x->dig[v] = 0; }
    mx->fin_head = mx->fin_tail = mx->now_head = mx->now_tail = 0;
    mx->npaced = mx->nreq = mx->running = mx->from_peer = mx->nstg = 0;
    x->t0 = t0 + mx->offset;   /* rank 0's start on this clock */
    mx->last = dp_now();
    for (k = 0; k < mx->size; k++) mx->seen[k] = mx->last;   /* all there at the start */
    dp__rt_reset(&x->rt, x->t0);
    rc = dp__rt_loop(&x->rt, &h, x->rt.done, n + x->m, err);
    while (mx->running > 0) pthread_cond_wait(&mx->wake, &x->mu);   /* after a failure: ops still running */
    pthread_mutex_unlock(&x->mu);
    if (!rc && mx->cu.x && !(rc = mx->cu.end(mx->cu.x, x->start, x->end, x->dig, keep, err)))
        for (v = 0; v < n; v++) {
            if (mx->remote[x->assign[v]]) continue;
            x->start[v] += tg - x->t0;
            x->end[v] += tg - x->t0;
            x->busy[x->assign[v]] += x->end[v] - x->start[v];
        }
    if (rc) dp__mpi_abandon(mx, rc, err);
    {
        /* the agreement's own failure to answer says less than the run's */
        dp_error mine = *err;
        k = dp__mpi_agree_on(mx->comm, mx, rc, err, -1, NULL);
        if (k && rc && !strncmp(err->msg, "mpi: ", 5)) {
            char m[sizeof mine.msg];
            dp__mpi_prefix(m, sizeof m, mx->rank, mine.msg);
            k = dp__fail(err, (dp_code)rc, "%s", m);
        }
        if (k) return k;
    }
    *wall = 0;
    for (v = 0; v < n; v++) {
        out[v] = x->start[v]; out[n + v] = x->end[v]; out[2 * (size_t)n + v] = x->cpu[v];
        if (x->end[v] > *wall) *wall = x->end[v];
    }
    for (d = 0; d < nd; d++) {
        out[3 * (size_t)n + d] = mx->remote[d] ? 0 : x->busy[d];
        out[3 * (size_t)n + nd + d] = mx->remote[d] ? 0 : x->rt.peak[d];
    }
    if ((rc = dp__mpi_allreduce(out, 3 * n + 2 * nd, MPI_DOUBLE, MPI_SUM, mx, "gathering the times", err))) return rc;
    if ((rc = dp__mpi_allreduce(wall, 1, MPI_DOUBLE, MPI_MAX, mx, "gathering the wall time", err))) return rc;
    if ((rc = dp__mpi_allreduce(x->dig, n, MPI_UINT64_T, MPI_BXOR, mx, "gathering the digests", err))) return rc;
    for (v = 0; v < n; v++)
        if (!mx->cu.x || g->out_off[v + 1] == g->out_off[v]) dg = (dg ^ x->dig[v]) * 0x100000001b3ULL;   /* GPUs: sinks */
    if (r == 0) *digest = dg;
    else if (dg != *digest) return dp__fail(err, DP_ERR_GRAPH, "exec (mpi): run %d computed different outputs than run 0", r);
    return 0;
}

/* With keep_outputs, after the last run: this rank's real sinks' outputs
   into res, and rank 0 every other rank's. */
static int dp__mpi_outputs(dp__mpix *mx, dp_exec_result *res, dp_error *err)
{
    dp__cpux *x = &mx->x;
    const dp_graph *g = x->g;
    MPI_Request *r = mx->req;
    int v, k = 0, rc = 0, mrc, *rv = mx->idx;   /* the sink of each request */
    for (v = 0; v < x->n && !rc; v++) {
        int owner = mx->rank_of[x->assign[v]];
        size_t bytes = dp_exec_op_bytes(g, v, x->rt.bscale);
        if (!dp__is_real(g, v) || g->out_off[v + 1] > g->out_off[v]) continue;
        if (owner != mx->rank && mx->rank != 0) continue;
        /* a GPU's: read back by the run already */
        if (!res->outputs[v] && !(res->outputs[v] = (float *)dp__alloc(bytes, 1, err, "executor outputs"))) { rc = DP_ERR_NOMEM; break; }
        if (owner == mx->rank) {
            if (!mx->cu.x) memcpy(res->outputs[v], x->buf[v], bytes);
            if (mx->rank == 0) continue;
            mrc = MPI_Isend(res->outputs[v], (int)bytes, MPI_BYTE, 0, DP__MPI_TAG_EDGE + x->m + v, mx->comm, &r[k]);
        } else {
            mrc = MPI_Irecv(res->outputs[v], (int)bytes, MPI_BYTE, owner, DP__MPI_TAG_EDGE + x->m + v, mx->comm, &r[k]);
        }
        rv[k] = v;
        if (mrc != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "sending a sink's output");
        else if (++k == x->m + 1) {   /* as many as there are request slots: wait for them */
            for (; k > 0 && !rc; k--) rc = dp__mpi_wait_req(&r[k - 1], mx, -1, 0, "gathering sinks' outputs", mx->rank ? 0 : mx->rank_of[x->assign[rv[k - 1]]], err);
        }
    }
    for (; k > 0 && !rc; k--) rc = dp__mpi_wait_req(&r[k - 1], mx, -1, 0, "gathering sinks' outputs", mx->rank ? 0 : mx->rank_of[x->assign[rv[k - 1]]], err);
    return rc;
}

/* A posted receive given up: cancelled, then freed unless it completed
   meanwhile; *posted cleared. */
static void dp__mpi_cancel(MPI_Request *r, int *posted)
{
    int flag = 0;
    if (!*posted) return;
    MPI_Cancel(r);
    MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    if (!flag) MPI_Request_free(r);
    *posted = 0;
}

/* The threads stopped and joined, every buffer freed. */
static void dp__mpi_teardown(dp__mpix *mx, pthread_t *th, const unsigned char *started)
{
    dp__cpux *x = &mx->x;
    int d, k;
    if (x->mutex_ok) {
        pthread_mutex_lock(&x->mu);
        mx->quit = 1;
        for (d = 0; d < x->ncv; d++) pthread_cond_broadcast(&x->cv[d]);
        pthread_mutex_unlock(&x->mu);
    }
    for (d = 0; started && d < x->nd; d++) if (started[d]) pthread_join(th[d], NULL);
    if (mx->cu.x && !mx->keep_cu) mx->cu.close(mx->cu.x);   /* kept: MPI may still touch its buffers */
    mx->cu.x = NULL;
    dp__mpi_cancel(&mx->ctl, &mx->ctl_posted);
    dp__mpi_cancel(&mx->beat, &mx->beat_posted);
    dp__mpi_undup(&mx->comm);
    if (mx->wake_ok) pthread_cond_destroy(&mx->wake);
    dp__cpu_sync_free(x);
    if (x->buf && mx->remote) for (k = 0; k < x->n; k++) if (!mx->remote[x->assign[k]]) dp__cpu_free(x, x->assign[k], &x->buf[k], x->len[k]);
    if (x->xbuf) for (k = 0; k < x->m; k++) DP_FREE(x->xbuf[k]);
    if (x->pool)
        for (k = 0; k < x->nd * x->nsizes; k++)
            while (x->pool[k]) { unsigned char *b = x->pool[k]; x->pool[k] = dp__cpu_next(b); DP_FREE(b); }
    DP_FREE(x->pool);
    if (x->resbuf) for (d = 0; d < x->nd; d++) DP_FREE(x->resbuf[d]);
    DP_FREE(x->arena);
    dp__rt_free(&x->rt);
}

/* GPUs: every rank's matmuls in one precision (DEFAULT resolves per
   GPU), else the same failure on every rank. */
static int dp__mpi_same_precision(dp__mpix *mx, dp_error *err)
{
    int p[2], rc;
    p[0] = mx->cu.precision; p[1] = -mx->cu.precision;
    if ((rc = dp__mpi_allreduce(p, 2, MPI_INT, MPI_MIN, mx, "comparing precisions", err))) return rc;
    if (p[0] != -p[1])
        return dp__fail(err, DP_ERR_DEVICE, "exec (mpi): the ranks' GPUs would run matmuls in %s and in %s (precision default resolves per GPU): ask for one (dp_exec_opts.precision)",
                        dp_precision_name(p[0]), dp_precision_name(-p[1]));
    return 0;
}

DPDEF int dp_exec_mpi(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *opts,
                      dp_exec_result *res, dp_error *err)
{
    dp_exec_opts o;
    dp__mpix mx;
    dp__cpux *x = &mx.x;
    dp__mpiw *wk = NULL;
    pthread_t *th = NULL;
    unsigned char started[DP_MAX_DEVICES];
    double *runs = NULL, deadline;
    uint64_t digest = 0, hash[4];
    dp_error mine, local;
    int rc, k, r, rank = 0, size = 1, inited = 0, n, nd;
    if (!err) err = &local;
    memset(&mx, 0, sizeof mx);
    memset(started, 0, sizeof started);
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (res) memset(res, 0, sizeof *res);
    dp__ok(err);
    mx.comm = MPI_COMM_NULL;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited) return dp__fail(err, DP_ERR_ARG, "exec (mpi): MPI is not initialised (MPI_Init_thread first)");
    if (MPI_Comm_rank(dp__mpi_comm(o.mpi), &rank) != MPI_SUCCESS || MPI_Comm_size(dp__mpi_comm(o.mpi), &size) != MPI_SUCCESS)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi): not a valid communicator");
    /* every rank's own checks, then agreement: the same outcome on all */
    rc = dp__mpi_args(g, c, assign, &o, res, size, err);
    mx.timeout = o.mpi && o.mpi->timeout > 0 && o.mpi->timeout < 1e9 ? o.mpi->timeout : 30.0;
    deadline = dp_now() + mx.timeout;
    mine = *err;
    if ((k = dp__mpi_dup(dp__mpi_comm(o.mpi), &mx.comm, deadline, 0, err))) return k;
    *err = mine;
    mx.rank = rank; mx.size = size;
    if ((rc = dp__mpi_agree_on(mx.comm, NULL, rc, err, deadline, NULL))) { dp__mpi_undup(&mx.comm); return rc; }
    dp__mpi_hashes(g, c, assign, &o, hash);
    if ((rc = dp__mpi_same_inputs(mx.comm, hash, deadline, err))) { dp__mpi_undup(&mx.comm); return rc; }
    n = g->n_ops; nd = c->n;
    x->g = g; x->c = c; x->assign = assign; x->n = n; x->m = g->n_edges; x->nd = nd;
    x->err = err; x->seed = o.seed; x->cpu_times = o.cpu_times != 0;
    rc = dp__mpi_setup(&mx, &o, &runs, &wk, &th, started, err);
    if (!rc) rc = dp__exec_result_alloc(res, n, nd, &o, err);
    for (k = 0; !rc && mx.cu.x && o.keep_outputs && k < n; k++)   /* a GPU's outputs: read into these */
        if (!mx.remote[assign[k]] && dp__is_real(g, k) && g->out_off[k + 1] == g->out_off[k]
            && !(res->outputs[k] = (float *)dp__alloc(dp_exec_op_bytes(g, k, o.bytes_scale), 1, err, "executor outputs")))
            rc = DP_ERR_NOMEM;
    if (!rc) {
        int mrc = MPI_Irecv(&mx.ctl_in, (int)sizeof mx.ctl_in, MPI_BYTE, MPI_ANY_SOURCE, DP__MPI_TAG_FAIL, mx.comm, &mx.ctl);
        if (mrc != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Irecv");
        else mx.ctl_posted = 1;
        if (!rc && (mrc = MPI_Irecv(&mx.beat_in, 1, MPI_BYTE, MPI_ANY_SOURCE, DP__MPI_TAG_BEAT, mx.comm, &mx.beat)) != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Irecv");
        else if (!rc) mx.beat_posted = 1;
    }
    /* every rank seen now (a failed setup may leave no place to say so:
       then a deadline) */
    for (k = 0; mx.seen && k < size; k++) mx.seen[k] = dp_now();
    rc = dp__mpi_agree_on(mx.comm, mx.seen ? &mx : NULL, rc, err, mx.seen ? -1 : dp_now() + 4 * mx.timeout, NULL);
    if (!rc && mx.cu.x) rc = dp__mpi_same_precision(&mx, err);
    if (!rc) rc = dp__mpi_clocks(&mx, err);
    for (r = 0; r < o.reps && !rc; r++) {
        rc = dp__mpi_run(&mx, r, runs, &res->wall_runs[r], &digest, o.keep_outputs && r == o.reps - 1 ? res->outputs : NULL, err);
        if (!rc && o.keep_outputs && r == o.reps - 1) {
            rc = dp__mpi_outputs(&mx, res, err);
            rc = dp__mpi_agree_on(mx.comm, &mx, rc, err, -1, NULL);
        }
        for (k = 0; k < n; k++) if (!mx.remote[assign[k]]) dp__cpu_free(x, assign[k], &x->buf[k], x->len[k]);
        for (k = 0; k < x->m; k++) { DP_FREE(x->xbuf[k]); x->xbuf[k] = NULL; }
        if (mx.cu.x && !mx.keep_cu) (void)mx.cu.drain(mx.cu.x, NULL);   /* a failure here shows in the next run's start */
    }
    if (!rc) {
        int med = dp__median_index(res->wall_runs, o.reps);
        const double *m = runs + (3 * (size_t)n + 2 * (size_t)nd) * med;
        res->n_ops = n; res->n_devices = nd; res->reps = o.reps; res->precision = mx.cu.x ? mx.cu.precision : DP_PREC_FP32;
        res->gpus = mx.cu.gpus;
        res->wall_median = res->wall_runs[med];
        memcpy(res->start, m, sizeof(double) * (size_t)n);
        memcpy(res->end, m + n, sizeof(double) * (size_t)n);
        if (res->cpu) memcpy(res->cpu, m + 2 * (size_t)n, sizeof(double) * (size_t)n);
        memcpy(res->busy, m + 3 * (size_t)n, sizeof(double) * (size_t)nd);
        memcpy(res->peak_bytes, m + 3 * (size_t)n + nd, sizeof(double) * (size_t)nd);
        res->digest = digest;
        res->seconds_per_unit = o.seconds_per_unit;
        res->bytes_scale = o.bytes_scale;
    }
    dp__mpi_teardown(&mx, th, started);
    if (rc) dp_exec_result_free(res);
    return rc;
}

/* ---- stage real across ranks: dp_exec_mpi_lead, _follow, _stop ------- */
/* What rank 0 sends before each run (or to stop): the options but
   opts->mpi, whose timeout, devices and gpu_direct come along. */
typedef struct dp__mpicmd {
    int run, n, order, has_prio, reps, cpu_times, keep_outputs, dispatch;
    int precision, gpus, link_pacing, devices, gpu_direct;
    double spu, bscale, device_bytes, timeout;
    uint64_t seed;
} dp__mpicmd;

/* A follower's watch on rank 0 between runs: a receive of rank 0's
   heartbeats (dp_exec_mpi_beat) posted on the caller's comm, when rank 0
   was last heard from, and how long it may be silent. */
typedef struct dp__mpilive {
    MPI_Comm comm;
    MPI_Request r;
    int posted;
    char in;
    double seen, timeout;
} dp__mpilive;

static void dp__mpilive_post(dp__mpilive *lv)
{
    lv->posted = MPI_Irecv(&lv->in, 1, MPI_BYTE, 0, DP__MPI_TAG_LEAD, lv->comm, &lv->r) == MPI_SUCCESS;
}

static void dp__mpilive_end(dp__mpilive *lv)
{
    if (lv->posted && MPI_Cancel(&lv->r) == MPI_SUCCESS) MPI_Wait(&lv->r, MPI_STATUS_IGNORE);
    lv->posted = 0;
}

/* Waits for a follower's request r (a step of rank 0's next command) as
   long as rank 0 keeps beating: each heartbeat, and r's completion, count
   as a sign of life; silence for lv->timeout fails, naming rank 0.
   Polls every millisecond (the leader may train for minutes). */
static int dp__mpi_wait_lead(MPI_Request *r, dp__mpilive *lv, const char *what, dp_error *err)
{
    for (;;) {
        struct timespec ts;
        int flag = 0, mrc;
        double t;
        if ((mrc = MPI_Test(r, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, what);
        t = dp_now();
        if (flag) { lv->seen = t; return 0; }
        while (lv->posted && MPI_Test(&lv->r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
            lv->seen = t;
            dp__mpilive_post(lv);
        }
        if (t - lv->seen > lv->timeout)
            return dp__fail(err, DP_ERR_PEER, "mpi: %s: rank 0 did not answer in %.3g s (it died or stopped answering; "
                            "between runs a leader calls dp_exec_mpi_beat)", what, t - lv->seen);
        ts.tv_sec = 0; ts.tv_nsec = 1000000L;
        nanosleep(&ts, NULL);
    }
}

/* Rank 0 sends cmd (and assign, prio) on a duplicate of the comm; a
   follower (lv not NULL) receives them, waiting as long as rank 0 shows
   life (dp__mpi_wait_lead). */
static int dp__mpi_command(const dp_mpi_opts *mo, dp__mpicmd *cmd, int **assign, double **prio, dp__mpilive *lv, dp_error *err)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Request r;
    int lead = !lv;
    double deadline = lead ? dp_now() + (cmd->timeout > 0 ? cmd->timeout : 60.0) : -1;
    int rc = 0, mrc;
    if (lead) {
        if ((rc = dp__mpi_dup(dp__mpi_comm(mo), &comm, deadline, 0, err))) return rc;
    } else {
        if ((mrc = MPI_Comm_idup(dp__mpi_comm(mo), &comm, &r)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Comm_idup");
        if ((rc = dp__mpi_wait_lead(&r, lv, "waiting for a placement", err))) return rc;
        if ((mrc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Comm_set_errhandler");
    }
    if (!rc && (mrc = MPI_Ibcast(cmd, (int)sizeof *cmd, MPI_BYTE, 0, comm, &r)) != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Ibcast");
    else if (!rc) rc = lead ? dp__mpi_wait_req(&r, NULL, deadline, 0, "sending a placement", -1, err)
                            : dp__mpi_wait_lead(&r, lv, "waiting for a placement", err);
    if (!rc && cmd->run && !lead) {
        *assign = (int *)dp__alloc((size_t)cmd->n + 1, sizeof(int), err, "placement from rank 0");
        *prio = cmd->has_prio ? (double *)dp__alloc((size_t)cmd->n + 1, sizeof(double), err, "placement from rank 0") : NULL;
        if (!*assign || (cmd->has_prio && !*prio)) rc = DP_ERR_NOMEM;
    }
    if (!rc && cmd->run) {
        if ((mrc = MPI_Ibcast(*assign, cmd->n, MPI_INT, 0, comm, &r)) != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Ibcast");
        else rc = dp__mpi_wait_req(&r, NULL, dp_now() + 60, 0, "sending a placement", -1, err);
    }
    if (!rc && cmd->run && cmd->has_prio) {
        if ((mrc = MPI_Ibcast(*prio, cmd->n, MPI_DOUBLE, 0, comm, &r)) != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Ibcast");
        else rc = dp__mpi_wait_req(&r, NULL, dp_now() + 60, 0, "sending a placement", -1, err);
    }
    dp__mpi_undup(&comm);
    return rc;
}

DPDEF int dp_exec_mpi_lead(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *opts,
                           dp_exec_result *res, dp_error *err)
{
    dp__mpicmd cmd;
    dp_exec_opts o;
    int rank = -1, rc;
    int *a = (int *)assign;
    double *p;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    p = (double *)o.priority;
    if (MPI_Comm_rank(dp__mpi_comm(o.mpi), &rank) != MPI_SUCCESS || rank != 0)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi lead): rank %d: only rank 0 leads (the others call dp_exec_mpi_follow)", rank);
    if (!g || !assign) return dp__fail(err, DP_ERR_ARG, "exec (mpi lead): graph or assignment missing");
    memset(&cmd, 0, sizeof cmd);
    cmd.run = 1; cmd.n = g->n_ops; cmd.order = (int)o.order; cmd.has_prio = o.priority != NULL; cmd.reps = o.reps;
    cmd.cpu_times = o.cpu_times; cmd.keep_outputs = o.keep_outputs; cmd.dispatch = (int)o.dispatch;
    cmd.spu = o.seconds_per_unit; cmd.bscale = o.bytes_scale; cmd.device_bytes = o.device_bytes; cmd.seed = o.seed;
    cmd.timeout = o.mpi ? o.mpi->timeout : 0;
    cmd.precision = (int)o.precision; cmd.gpus = o.gpus; cmd.link_pacing = o.link_pacing;
    cmd.devices = o.mpi ? o.mpi->devices : 0; cmd.gpu_direct = o.mpi ? o.mpi->gpu_direct : 0;
    if ((rc = dp__mpi_command(o.mpi, &cmd, &a, &p, NULL, err))) return rc;
    return dp_exec_mpi(g, c, assign, &o, res, err);
}

DPDEF int dp_exec_mpi_beat(const dp_exec_opts *opts, dp_error *err)
{
    MPI_Comm comm = dp__mpi_comm(opts ? opts->mpi : NULL);
    int rank = -1, size = 0, r, mrc;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0 || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi beat): rank %d: only rank 0 leads", rank);
    for (r = 1; r < size; r++) {
        MPI_Request q;
        if ((mrc = MPI_Isend(&dp__mpi_beat_byte, 1, MPI_BYTE, r, DP__MPI_TAG_LEAD, comm, &q)) != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Isend");
        MPI_Request_free(&q);   /* one byte: sent eagerly */
    }
    return 0;
}

DPDEF int dp_exec_mpi_follow(const dp_graph *g, const dp_cluster *c, const dp_exec_opts *opts, dp_error *err)
{
    dp_mpi_opts mo;
    dp__mpilive lv;
    int rank = 0, rc = 0, *assign = NULL;
    double *prio = NULL;
    memset(&mo, 0, sizeof mo);
    if (opts && opts->mpi) mo = *opts->mpi;
    if (MPI_Comm_rank(dp__mpi_comm(&mo), &rank) != MPI_SUCCESS || rank == 0)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi follow): rank %d: rank 0 leads (dp_exec_mpi_lead), the others follow", rank);
    if (!g) return dp__fail(err, DP_ERR_ARG, "exec (mpi follow): no graph");
    memset(&lv, 0, sizeof lv);
    lv.comm = dp__mpi_comm(&mo);
    lv.seen = dp_now();
    dp__mpilive_post(&lv);
    for (;;) {
        dp__mpicmd cmd;
        dp_exec_opts o;
        dp_exec_result r;
        int *own = NULL;
        memset(&cmd, 0, sizeof cmd);
        lv.timeout = mo.timeout > 0 ? mo.timeout : 60.0;
        if ((rc = dp__mpi_command(&mo, &cmd, &assign, &prio, &lv, err)) || !cmd.run) break;
        memset(&o, 0, sizeof o);
        o.order = (dp_order)cmd.order; o.priority = cmd.n == g->n_ops ? prio : NULL; o.reps = cmd.reps;
        o.cpu_times = cmd.cpu_times; o.keep_outputs = cmd.keep_outputs; o.dispatch = (dp_dispatch_mode)cmd.dispatch;
        o.seconds_per_unit = cmd.spu; o.bytes_scale = cmd.bscale; o.device_bytes = cmd.device_bytes; o.seed = cmd.seed;
        o.precision = (dp_precision)cmd.precision; o.gpus = cmd.gpus; o.link_pacing = cmd.link_pacing;
        mo.timeout = cmd.timeout; mo.devices = cmd.devices; mo.gpu_direct = cmd.gpu_direct;
        o.mpi = &mo;
        /* another graph than the leader's: a valid placement of this one,
           which the input check refuses as the graph differs */
        if (cmd.n != g->n_ops && !(own = (int *)dp__alloc((size_t)g->n_ops + 1, sizeof(int), err, "placement"))) rc = DP_ERR_NOMEM;
        if (!rc) rc = dp_exec_mpi(g, c, own ? own : assign, &o, &r, err);
        if (!rc) dp_exec_result_free(&r);
        DP_FREE(assign); DP_FREE(prio); DP_FREE(own);
        assign = NULL; prio = NULL;
        if (rc) break;
        lv.seen = dp_now();   /* the silence is counted from the run's end */
    }
    DP_FREE(assign); DP_FREE(prio);
    dp__mpilive_end(&lv);
    return rc;
}

DPDEF int dp_exec_mpi_stop(const dp_exec_opts *opts, dp_error *err)
{
    dp__mpicmd cmd;
    int rank = -1;
    const dp_mpi_opts *mo = opts ? opts->mpi : NULL;
    if (MPI_Comm_rank(dp__mpi_comm(mo), &rank) != MPI_SUCCESS || rank != 0)
        return dp__fail(err, DP_ERR_ARG, "exec (mpi stop): rank %d: only rank 0 leads", rank);
    memset(&cmd, 0, sizeof cmd);
    cmd.timeout = mo ? mo->timeout : 0;
    dp__ok(err);
    return dp__mpi_command(mo, &cmd, NULL, NULL, NULL, err);
}

/* ---- measuring the links between ranks -------------------------------- */
DPDEF int dp_mpi_pingpong(const dp_mpi_opts *mo, int peer, size_t bytes, int reps, double *one_way, dp_error *err)
{
    MPI_Comm comm;
    MPI_Request r;
    double deadline = dp_now() + (mo && mo->timeout > 0 ? mo->timeout : 60.0), *rtt = NULL, t = 0;
    unsigned char *buf = NULL;
    int rank, size, rc = 0, i, mrc;
    dp__ok(err);
    if ((rc = dp__mpi_dup(dp__mpi_comm(mo), &comm, deadline, 0, err))) return rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!one_way) rc = dp__fail(err, DP_ERR_ARG, "pingpong: no result to write");
    else if (peer < 1 || peer >= size) rc = dp__fail(err, DP_ERR_RANGE, "pingpong: peer %d not in 1..%d (the ranks but 0)", peer, size - 1);
    else if (bytes > (size_t)INT_MAX) rc = dp__fail(err, DP_ERR_LIMIT, "pingpong: %zu bytes, more than one MPI message takes (INT_MAX)", bytes);
    else if (reps < 1 || reps > 1000000) rc = dp__fail(err, DP_ERR_RANGE, "pingpong: reps %d not in 1..1000000", reps);
    else if (!(buf = (unsigned char *)dp__alloc(bytes + 1, 1, err, "pingpong")) || !(rtt = (double *)dp__alloc((size_t)reps + 2, sizeof(double), err, "pingpong"))) rc = DP_ERR_NOMEM;
    rc = dp__mpi_agree_on(comm, NULL, rc, err, deadline, NULL);
    for (i = 0; i < reps + 2 && !rc && (rank == 0 || rank == peer); i++) {
        int other = rank ? 0 : peer, k;
        double t0 = dp_now();
        for (k = 0; k < 2 && !rc; k++) {
            /* rank 0 sends then receives, the peer the other way round */
            if ((k == 0) == (rank == 0)) mrc = MPI_Isend(buf, (int)bytes, MPI_BYTE, other, 1, comm, &r);
            else mrc = MPI_Irecv(buf, (int)bytes, MPI_BYTE, other, 1, comm, &r);
            rc = mrc != MPI_SUCCESS ? dp__mpi_fail(err, mrc, "pingpong") : dp__mpi_wait_req(&r, NULL, deadline, 0, "pingpong", other, err);
        }
        if (i >= 2) rtt[i - 2] = dp_now() - t0;
    }
    if (!rc && rank == 0) t = dp__median(rtt, reps) / 2;
    rc = dp__mpi_agree_on(comm, NULL, rc, err, deadline, NULL);
    if (!rc && (mrc = MPI_Ibcast(&t, 1, MPI_DOUBLE, 0, comm, &r)) != MPI_SUCCESS) rc = dp__mpi_fail(err, mrc, "MPI_Ibcast");
    else if (!rc) rc = dp__mpi_wait_req(&r, NULL, deadline, 0, "pingpong", 0, err);
    if (!rc) *one_way = t;
    DP_FREE(buf); DP_FREE(rtt);
    dp__mpi_undup(&comm);
    return rc;
}

/* Rank 0's calibration of one node (lc) on every rank, then the whole
   cluster: lc's devices once per rank, nodes of consecutive devices. */
static int dp__mpi_cluster_of(dp_cluster *lc, MPI_Comm comm, int size, const char *kind, dp_cluster *out, double deadline, dp_error *err)
{
    int D = lc->n, N = D * size, rc, d, r, k, a;
    MPI_Request q[8];
    int mrc = MPI_SUCCESS, nq = 0;
#define DP__MPI_BCAST(p, cnt, type) if (mrc == MPI_SUCCESS) mrc = MPI_Ibcast((p), (cnt), (type), 0, comm, &q[nq++])
    DP__MPI_BCAST(lc->speed, D, MPI_DOUBLE);
    DP__MPI_BCAST(lc->kind_speed, D * DP_KIND__COUNT, MPI_DOUBLE);
    DP__MPI_BCAST(lc->memory, D, MPI_DOUBLE);
    DP__MPI_BCAST(lc->bandwidth, D * D, MPI_DOUBLE);
    DP__MPI_BCAST(lc->latency, D * D, MPI_DOUBLE);
    DP__MPI_BCAST(lc->overhead, D, MPI_DOUBLE);
    DP__MPI_BCAST(lc->curve, (int)(D * DP_KIND__COUNT * DP_MAX_CURVE * 2), MPI_DOUBLE);
    DP__MPI_BCAST(lc->curve_len, D * DP_KIND__COUNT, MPI_INT);
#undef DP__MPI_BCAST
    if (mrc != MPI_SUCCESS) return dp__mpi_fail(err, mrc, "MPI_Ibcast");
    for (k = 0; k < nq; k++) if ((rc = dp__mpi_wait_req(&q[k], NULL, deadline, 0, "sharing the calibration", 0, err))) return rc;
    if ((rc = dp_cluster_homogeneous(out, N, 1, 1, 0, err))) return rc;
    for (r = 0; r < size; r++)
        for (d = 0; d < D; d++) {
            int o = r * D + d;
            out->speed[o] = lc->speed[d]; out->memory[o] = lc->memory[d]; out->overhead[o] = lc->overhead[d];
            memcpy(out->kind_speed + (size_t)o * DP_KIND__COUNT, lc->kind_speed + (size_t)d * DP_KIND__COUNT, sizeof(double) * DP_KIND__COUNT);
            memcpy(out->curve_len + (size_t)o * DP_KIND__COUNT, lc->curve_len + (size_t)d * DP_KIND__COUNT, sizeof(int) * DP_KIND__COUNT);
            memcpy(out->curve + (size_t)o * DP_KIND__COUNT * DP_MAX_CURVE, lc->curve + (size_t)d * DP_KIND__COUNT * DP_MAX_CURVE,
                   sizeof(dp_speed_point) * DP_KIND__COUNT * DP_MAX_CURVE);
            snprintf(out->name[o], 32, "n%d%s%d", r, kind, d);
            for (a = 0; a < D; a++) {
                out->bandwidth[o * N + r * D + a] = lc->bandwidth[d * D + a];
                out->latency[o * N + r * D + a] = lc->latency[d * D + a];
            }
        }
    return 0;
}

DPDEF int dp_calibrate_mpi(dp_cluster *out, const dp_calibrate_opts *opts, const dp_mpi_opts *mo, dp_error *err)
{
    dp_calibrate_opts o;
    dp_cluster lc, c;
    MPI_Comm comm;
    double deadline = dp_now() + (mo && mo->timeout > 0 ? mo->timeout : 600.0), bw = 0, one = 0, two = 0, lat = 0;
    int rank, size, rc, D, k, gpu = mo && mo->devices == DP_MPI_CUDA;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (o.devices == 0) o.devices = 1;
    memset(&lc, 0, sizeof lc);
    memset(&c, 0, sizeof c);
    if (!out) return dp__fail(err, DP_ERR_ARG, "calibrate (mpi): no cluster to write");
    memset(out, 0, sizeof *out);
    if ((rc = dp__mpi_dup(dp__mpi_comm(mo), &comm, deadline, 0, err))) return rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    D = o.devices;
    /* a failure on any rank is told to every rank (dp__mpi_agree_on) */
    if ((rc = dp__mpi_devices_check(mo, "calibrate (mpi)", err)) == 0) {
        if (D * (long long)size > DP_MAX_DEVICES) rc = dp__fail(err, DP_ERR_LIMIT, "calibrate (mpi): %d devices on each of %d ranks, more than %d (DP_MAX_DEVICES)", D, size, DP_MAX_DEVICES);
        else if (gpu) {   /* the rank's GPUs, as dp_exec_cuda runs them */
#ifdef DP_WITH_CUDA
            rc = dp_calibrate_cuda(&lc, &o, err);
#else
            rc = dp__fail(err, DP_ERR_ARG, "calibrate (mpi): devices DP_MPI_CUDA: this program was built without DP_WITH_CUDA");
#endif
        } else rc = dp_calibrate_cpu(&lc, &o, err);   /* every rank at once: the load of a run */
    }
    if ((rc = dp__mpi_agree_on(comm, NULL, rc, err, deadline, NULL))) goto done;
    if ((rc = dp__mpi_cluster_of(&lc, comm, size, gpu ? "gpu" : "cpu", &c, deadline, err))) goto done;
    if (size > 1) {
        /* latency: a hand-off through the executor over one within a
           device (1 x 1 tensors); bandwidth: the same with 256 x 256
           tensors (256 KiB), what a tensor's transfer costs the executor,
           at most what 4 MiB ping-pongs give */
        dp_exec_opts eo;
        double big1 = 0, big2 = 0, bytes = 4.0 * 256 * 256;
        memset(&eo, 0, sizeof eo);
        eo.mpi = mo;
        if ((rc = dp_mpi_pingpong(mo, 1, (size_t)4 << 20, 20, &one, err))) goto done;
        bw = (double)((size_t)4 << 20) / (one > 1e-9 ? one : 1e-9);
        if ((rc = dp_cluster_set_nodes(&c, size, bw, 0, err))) goto done;
        if ((rc = dp__cal_chain(400, 1, 0, 0, &c, dp_exec_mpi, &eo, &one, err))) goto done;
        if ((rc = dp__cal_chain(400, 1, 0, D, &c, dp_exec_mpi, &eo, &two, err))) goto done;
        if ((rc = dp__cal_chain(100, 256, 0, 0, &c, dp_exec_mpi, &eo, &big1, err))) goto done;
        if ((rc = dp__cal_chain(100, 256, 0, D, &c, dp_exec_mpi, &eo, &big2, err))) goto done;
        lat = two - one > 0 ? two - one : 0;
        if ((big2 - big1) - lat > 0 && bytes / ((big2 - big1) - lat) < bw) bw = bytes / ((big2 - big1) - lat);
        if ((rc = dp_cluster_set_nodes(&c, size, bw, lat, err))) goto done;
        /* this executor's own cost between dependent ops on a device (its
           dispatching thread hands each op to a compute thread and takes
           its end back), in place of the CPU executor's */
        for (k = 0; k < c.n; k++) c.overhead[k] = one;
    }
    *out = c;
    memset(&c, 0, sizeof c);
done:
    dp_cluster_free(&lc);
    dp_cluster_free(&c);
    dp__mpi_undup(&comm);
    return rc;
}
#endif /* DP_WITH_MPI */

#ifdef __cplusplus
}
#endif
#endif /* DOPPLER_IMPLEMENTATION_DONE */
#endif /* DOPPLER_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 the doppler authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
