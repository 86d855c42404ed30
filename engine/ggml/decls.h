// Our own declarations of the subset of the ggml C API that engine/ggml
// calls. No ggml header is vendored: this file is the single copy, included
// by the cgo preamble and by tools/abicheck/abicheck.c, which includes the
// real headers first so that any drift is a compile error there.
//
// Enum parameters are declared as unsigned int (an enum with no negative
// enumerator is compatible with unsigned int in gcc and clang; declaring them
// as int is a "conflicting types" error). Enums with negative values
// (ggml_status) are declared as int.
//
// Struct layouts we read or pass by value are written once as field-list
// macros. The real headers define the structs themselves in abicheck.c,
// which then instantiates the macros under other names and compares sizes
// and offsets with _Static_assert.
#ifndef H3_GGML_DECLS_H
#define H3_GGML_DECLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ggml_context;
struct ggml_cgraph;
struct ggml_tensor;
struct ggml_backend_buffer;
struct ggml_backend_buffer_type;
struct ggml_backend;
struct ggml_backend_device;
struct ggml_backend_sched;
struct ggml_backend_reg;

typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct ggml_backend_buffer * ggml_backend_buffer_t;
typedef struct ggml_backend * ggml_backend_t;
typedef struct ggml_backend_device * ggml_backend_dev_t;
typedef struct ggml_backend_sched * ggml_backend_sched_t;
typedef struct ggml_backend_reg * ggml_backend_reg_t;
typedef uint16_t ggml_fp16_t;
typedef void (*ggml_to_float_t)(const void * x, float * y, int64_t k);
typedef void (*ggml_from_float_t)(const float * x, void * y, int64_t k);

#define H3_GGML_MAX_DIMS 4
#define H3_GGML_MAX_SRC 10
#define H3_GGML_MAX_OP_PARAMS 64
#define H3_GGML_MAX_NAME 64
#define H3_GGML_MROPE_SECTIONS 4

#define H3_GGML_TENSOR_FIELDS \
	unsigned int type; \
	struct ggml_backend_buffer * buffer; \
	int64_t ne[H3_GGML_MAX_DIMS]; \
	size_t nb[H3_GGML_MAX_DIMS]; \
	unsigned int op; \
	int32_t op_params[H3_GGML_MAX_OP_PARAMS / sizeof(int32_t)]; \
	int32_t flags; \
	struct ggml_tensor * src[H3_GGML_MAX_SRC]; \
	struct ggml_tensor * view_src; \
	size_t view_offs; \
	void * data; \
	char name[H3_GGML_MAX_NAME]; \
	void * extra; \
	char padding[8];

#define H3_GGML_INIT_PARAMS_FIELDS \
	size_t mem_size; \
	void * mem_buffer; \
	bool no_alloc;

#define H3_GGML_TYPE_TRAITS_FIELDS \
	const char * type_name; \
	int64_t blck_size; \
	int64_t blck_size_interleave; \
	size_t type_size; \
	bool is_quantized; \
	ggml_to_float_t to_float; \
	ggml_from_float_t from_float_ref;

#define H3_GGML_DEV_CAPS_FIELDS \
	bool async; \
	bool host_buffer; \
	bool buffer_from_host_ptr; \
	bool events;

struct h3_ggml_dev_caps { H3_GGML_DEV_CAPS_FIELDS };

#define H3_GGML_DEV_PROPS_FIELDS \
	const char * name; \
	const char * description; \
	size_t memory_free; \
	const char * id; \
	size_t memory_total; \
	unsigned int type; \
	const char * device_id; \
	struct h3_ggml_dev_caps caps; \
	int driver_major; \
	int driver_minor; \
	int compute_major; \
	int compute_minor; \
	int integrated; \
	const char * library;

#ifndef GGML_FILE_MAGIC
struct ggml_tensor { H3_GGML_TENSOR_FIELDS };
struct ggml_init_params { H3_GGML_INIT_PARAMS_FIELDS };
struct ggml_type_traits { H3_GGML_TYPE_TRAITS_FIELDS };
#endif
#ifndef GGML_BACKEND_API
struct ggml_backend_dev_caps { H3_GGML_DEV_CAPS_FIELDS };
struct ggml_backend_dev_props { H3_GGML_DEV_PROPS_FIELDS };
#endif

// ggml.h: contexts, tensors, graphs
struct ggml_context * ggml_init(struct ggml_init_params params);
void ggml_free(struct ggml_context * ctx);
size_t ggml_tensor_overhead(void);
size_t ggml_graph_overhead_custom(size_t size, bool grads);
struct ggml_tensor * ggml_new_tensor(struct ggml_context * ctx, unsigned int type, int n_dims, const int64_t * ne);
struct ggml_tensor * ggml_set_name(struct ggml_tensor * tensor, const char * name);
void ggml_set_input(struct ggml_tensor * tensor);
void ggml_set_output(struct ggml_tensor * tensor);
size_t ggml_nbytes(const struct ggml_tensor * tensor);
int64_t ggml_nelements(const struct ggml_tensor * tensor);
int64_t ggml_blck_size(unsigned int type);
size_t ggml_type_size(unsigned int type);
size_t ggml_row_size(unsigned int type, int64_t ne);
bool ggml_is_contiguous(const struct ggml_tensor * tensor);
const char * ggml_op_desc(const struct ggml_tensor * t);
const char * ggml_op_name(unsigned int op);
unsigned int ggml_get_unary_op(const struct ggml_tensor * tensor);
unsigned int ggml_get_glu_op(const struct ggml_tensor * tensor);
struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads);
void ggml_build_forward_expand(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor);
int ggml_graph_n_nodes(struct ggml_cgraph * cgraph);
struct ggml_tensor * ggml_graph_node(struct ggml_cgraph * cgraph, int i);

// ggml.h: ops
struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
void ggml_mul_mat_set_prec(struct ggml_tensor * a, unsigned int prec);
struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s);
struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
struct ggml_tensor * ggml_group_norm(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps);
struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
	int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
	float beta_fast, float beta_slow);
struct ggml_tensor * ggml_rope_multi(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
	int n_dims, int sections[H3_GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base, float freq_scale,
	float ext_factor, float attn_factor, float beta_fast, float beta_slow);
struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
	struct ggml_tensor * v, struct ggml_tensor * mask, float scale, float max_bias, float logit_softcap);
void ggml_flash_attn_ext_set_prec(struct ggml_tensor * a, unsigned int prec);
struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale, float max_bias);
struct ggml_tensor * ggml_silu(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_gelu(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_gelu_erf(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_swiglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_sin(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_cos(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_tanh(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_exp(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_sigmoid(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
	int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, unsigned int dst_type);
struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0);
struct ggml_tensor * ggml_interpolate(struct ggml_context * ctx, struct ggml_tensor * a,
	int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint32_t mode);
struct ggml_tensor * ggml_pad_ext(struct ggml_context * ctx, struct ggml_tensor * a,
	int lp0, int rp0, int lp1, int rp1, int lp2, int rp2, int lp3, int rp3);
struct ggml_tensor * ggml_concat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int dim);
struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a,
	int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);
struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a, int axis0, int axis1, int axis2, int axis3);
struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, unsigned int type);
struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max);
struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a);
struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a);

// ggml.h: conversion and quantization
void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n);
void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n);
size_t ggml_quantize_chunk(unsigned int type, const float * src, void * dst, int64_t start, int64_t nrows,
	int64_t n_per_row, const float * imatrix);
bool ggml_quantize_requires_imatrix(unsigned int type);
const struct ggml_type_traits * ggml_get_type_traits(unsigned int type);

// ggml-backend.h
void ggml_backend_buffer_free(ggml_backend_buffer_t buffer);
void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, unsigned int usage);
void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer);
size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer);
bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer);
const char * ggml_backend_name(ggml_backend_t backend);
void ggml_backend_free(ggml_backend_t backend);
ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend);
void ggml_backend_tensor_set(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
void ggml_backend_tensor_get(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size);
void ggml_backend_synchronize(ggml_backend_t backend);
ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend);
const char * ggml_backend_dev_name(ggml_backend_dev_t device);
const char * ggml_backend_dev_description(ggml_backend_dev_t device);
void ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total);
unsigned int ggml_backend_dev_type(ggml_backend_dev_t device);
void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props);
ggml_backend_t ggml_backend_dev_init(ggml_backend_dev_t device, const char * params);
ggml_backend_buffer_t ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size);
bool ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op);
size_t ggml_backend_dev_count(void);
ggml_backend_dev_t ggml_backend_dev_get(size_t index);
ggml_backend_dev_t ggml_backend_dev_by_type(unsigned int type);
ggml_backend_reg_t ggml_backend_load(const char * path);
const char * ggml_backend_reg_name(ggml_backend_reg_t reg);
size_t ggml_backend_reg_dev_count(ggml_backend_reg_t reg);
ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends,
	size_t graph_size, bool parallel, bool op_offload);
void ggml_backend_sched_free(ggml_backend_sched_t sched);
int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched);
int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched);
ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node);
void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend);
bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
int ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
void ggml_backend_sched_reset(ggml_backend_sched_t sched);
size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend);
bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph);
int ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr);
ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size);

// ggml-alloc.h
ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);

// ggml-cpu.h
void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads);

#endif
