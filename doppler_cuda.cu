/* doppler_cuda.cu - the CUDA companion of doppler.h (skeleton).

   C ABI declared in doppler.h (>>api-cuda). This file includes doppler.h WITHOUT
   DOPPLER_IMPLEMENTATION: it needs only dp_error and the dp_code list, and
   it keeps stb_ds out of nvcc's C++. Link it with one C file that defines
   DOPPLER_IMPLEMENTATION when the program also needs the CPU library.

   Every CUDA call goes through cudaCheck(), which records the file, the line,
   the call and the runtime's message into the caller's dp_error and jumps to
   the function's `done:` label (each function keeps `int rc` and frees what
   it holds there). Nothing exits, nothing prints.

   Build: nvcc -O2 -I. -o build/doppler_cuda_probe doppler_cuda.cu demos/cuda_probe.c
*/
#include <cuda_runtime.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doppler.h"

/* ----------------------------------------------------------------------
   >>cuda-errors
   ---------------------------------------------------------------------- */
static int dp__cuda_error(dp_error *err, dp_code code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

static void dp__cuda_ok(dp_error *err)
{
    if (err) {
        err->code = DP_OK;
        err->msg[0] = 0;
    }
}

/* A failed CUDA call. There is no device-specific dp_code yet, so the
   failure is reported as DP_ERR_DEVICE. */
static int dp__cuda_fail(cudaError_t e, const char *call, const char *file, int line,
                         dp_error *err)
{
    if (e == cudaSuccess) return DP_OK;
    (void)cudaGetLastError(); /* clear the non-sticky error state */
    return dp__cuda_error(err, DP_ERR_DEVICE, "%s:%d: %s: %s (%s)", file, line, call,
                          cudaGetErrorString(e), cudaGetErrorName(e));
}

#define cudaCheck(call)                                                        \
    do {                                                                       \
        rc = dp__cuda_fail((call), #call, __FILE__, __LINE__, err);            \
        if (rc) goto done;                                                     \
    } while (0)

/* ----------------------------------------------------------------------
   >>cuda-devices
   ---------------------------------------------------------------------- */
extern "C" int dp_cuda_device_count(int *count, dp_error *err)
{
    int rc = DP_OK, n = 0;
    if (!count) return dp__cuda_error(err, DP_ERR_ARG, "dp_cuda_device_count: count is NULL");
    *count = 0;
    dp__cuda_ok(err);
    cudaCheck(cudaGetDeviceCount(&n));
    *count = n;
done:
    return rc;
}

static int dp__cuda_check_dev(int dev, dp_error *err)
{
    int rc = DP_OK, n = 0;
    cudaCheck(cudaGetDeviceCount(&n));
    if (dev < 0 || dev >= n)
        return dp__cuda_error(err, DP_ERR_RANGE, "CUDA device %d does not exist (%d device%s)",
                              dev, n, n == 1 ? "" : "s");
done:
    return rc;
}

extern "C" int dp_cuda_device_name(int dev, char *buf, int len, dp_error *err)
{
    int rc = DP_OK;
    cudaDeviceProp prop;
    if (!buf || len <= 0)
        return dp__cuda_error(err, DP_ERR_ARG, "dp_cuda_device_name: no buffer (len %d)", len);
    buf[0] = 0;
    dp__cuda_ok(err);
    if ((rc = dp__cuda_check_dev(dev, err))) return rc;
    cudaCheck(cudaGetDeviceProperties(&prop, dev));
    snprintf(buf, (size_t)len, "%s", prop.name);
done:
    return rc;
}

extern "C" int dp_cuda_device_info(int dev, dp_cuda_info *info, dp_error *err)
{
    int rc = DP_OK, prev = -1;
    size_t free_b = 0, total_b = 0;
    cudaDeviceProp prop;
    if (!info) return dp__cuda_error(err, DP_ERR_ARG, "dp_cuda_device_info: info is NULL");
    memset(info, 0, sizeof *info);
    dp__cuda_ok(err);
    if ((rc = dp__cuda_check_dev(dev, err))) return rc;
    cudaCheck(cudaGetDeviceProperties(&prop, dev));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->major = prop.major;
    info->minor = prop.minor;
    info->multiprocessors = prop.multiProcessorCount;
    info->total_bytes = (double)prop.totalGlobalMem;
    cudaCheck(cudaGetDevice(&prev));
    cudaCheck(cudaSetDevice(dev));
    cudaCheck(cudaMemGetInfo(&free_b, &total_b));
    info->free_bytes = (double)free_b;
done:
    if (prev >= 0) (void)cudaSetDevice(prev);
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-selftest
   ---------------------------------------------------------------------- */
__global__ static void dp__axpy_kernel(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int dp_cuda_selftest(int dev, int n, double *seconds, dp_error *err)
{
    int rc = DP_OK, prev = -1;
    double *hx = NULL, *hy = NULL, *dx = NULL, *dy = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    float ms = 0;
    const double a = 2.0;
    if (seconds) *seconds = 0;
    if (n <= 0) return dp__cuda_error(err, DP_ERR_ARG, "dp_cuda_selftest: n = %d", n);
    dp__cuda_ok(err);
    if ((rc = dp__cuda_check_dev(dev, err))) return rc;
    hx = (double *)malloc(sizeof *hx * (size_t)n);
    hy = (double *)malloc(sizeof *hy * (size_t)n);
    if (!hx || !hy) {
        rc = dp__cuda_error(err, DP_ERR_NOMEM, "dp_cuda_selftest: %d doubles", n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        hx[i] = (double)i;
        hy[i] = 1.0;
    }
    cudaCheck(cudaGetDevice(&prev));
    cudaCheck(cudaSetDevice(dev));
    cudaCheck(cudaMalloc((void **)&dx, sizeof *dx * (size_t)n));
    cudaCheck(cudaMalloc((void **)&dy, sizeof *dy * (size_t)n));
    cudaCheck(cudaMemcpy(dx, hx, sizeof *hx * (size_t)n, cudaMemcpyHostToDevice));
    cudaCheck(cudaMemcpy(dy, hy, sizeof *hy * (size_t)n, cudaMemcpyHostToDevice));
    cudaCheck(cudaEventCreate(&t0));
    cudaCheck(cudaEventCreate(&t1));
    cudaCheck(cudaEventRecord(t0, 0));
    dp__axpy_kernel<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    cudaCheck(cudaGetLastError());
    cudaCheck(cudaEventRecord(t1, 0));
    cudaCheck(cudaEventSynchronize(t1));
    cudaCheck(cudaEventElapsedTime(&ms, t0, t1));
    cudaCheck(cudaMemcpy(hy, dy, sizeof *hy * (size_t)n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        double want = a * (double)i + 1.0;
        if (fabs(hy[i] - want) > 1e-12 * (1.0 + fabs(want))) {
            rc = dp__cuda_error(err, DP_ERR_RANGE,
                                "dp_cuda_selftest: device %d: y[%d] = %.17g, expected %.17g",
                                dev, i, hy[i], want);
            goto done;
        }
    }
    if (seconds) *seconds = ms / 1e3;
done:
    if (t0) (void)cudaEventDestroy(t0);
    if (t1) (void)cudaEventDestroy(t1);
    if (dx) (void)cudaFree(dx);
    if (dy) (void)cudaFree(dy);
    if (prev >= 0) (void)cudaSetDevice(prev);
    free(hx);
    free(hy);
    return rc;
}
