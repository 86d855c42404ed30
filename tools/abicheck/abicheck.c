// abicheck compiles engine/ggml's own declarations of the ggml C API
// (engine/ggml/decls.h) after the real headers of the pinned ggml, so that
// any drift in a prototype is a "conflicting types" error, and checks the
// enum values and struct layouts the Go side relies on. Run by make abi-check;
// it only needs -fsyntax-only.
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include "../../engine/ggml/decls.h"
#include "../../engine/ggml/enums.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " != " #b)

struct mirror_tensor { H3_GGML_TENSOR_FIELDS };
struct mirror_init_params { H3_GGML_INIT_PARAMS_FIELDS };
struct mirror_type_traits { H3_GGML_TYPE_TRAITS_FIELDS };
struct mirror_dev_props { H3_GGML_DEV_PROPS_FIELDS };

#define SAME_FIELD(real, mirror, f) \
	_Static_assert(offsetof(real, f) == offsetof(mirror, f), #real "." #f " moved"); \
	_Static_assert(sizeof(((real *)0)->f) == sizeof(((mirror *)0)->f), #real "." #f " resized")

SAME(sizeof(struct ggml_tensor), sizeof(struct mirror_tensor));
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, type);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, buffer);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, ne);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, nb);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, op);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, op_params);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, flags);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, src);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, view_src);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, view_offs);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, data);
SAME_FIELD(struct ggml_tensor, struct mirror_tensor, name);
SAME(sizeof(struct ggml_init_params), sizeof(struct mirror_init_params));
SAME_FIELD(struct ggml_init_params, struct mirror_init_params, mem_size);
SAME_FIELD(struct ggml_init_params, struct mirror_init_params, mem_buffer);
SAME_FIELD(struct ggml_init_params, struct mirror_init_params, no_alloc);
SAME(sizeof(struct ggml_type_traits), sizeof(struct mirror_type_traits));
SAME_FIELD(struct ggml_type_traits, struct mirror_type_traits, blck_size);
SAME_FIELD(struct ggml_type_traits, struct mirror_type_traits, type_size);
SAME_FIELD(struct ggml_type_traits, struct mirror_type_traits, to_float);
SAME(sizeof(struct ggml_backend_dev_props), sizeof(struct mirror_dev_props));
SAME_FIELD(struct ggml_backend_dev_props, struct mirror_dev_props, memory_free);
SAME_FIELD(struct ggml_backend_dev_props, struct mirror_dev_props, memory_total);
SAME_FIELD(struct ggml_backend_dev_props, struct mirror_dev_props, type);
SAME_FIELD(struct ggml_backend_dev_props, struct mirror_dev_props, caps);
SAME_FIELD(struct ggml_backend_dev_props, struct mirror_dev_props, integrated);
SAME_FIELD(struct ggml_backend_dev_props, struct mirror_dev_props, library);
SAME(sizeof(struct ggml_backend_dev_caps), sizeof(struct h3_ggml_dev_caps));

SAME(H3_GGML_MAX_DIMS, GGML_MAX_DIMS);
SAME(H3_GGML_MAX_SRC, GGML_MAX_SRC);
SAME(H3_GGML_MAX_OP_PARAMS, GGML_MAX_OP_PARAMS);
SAME(H3_GGML_MAX_NAME, GGML_MAX_NAME);
SAME(H3_GGML_MROPE_SECTIONS, GGML_MROPE_SECTIONS);

#define H3_ENUM(ours, theirs) SAME(ours, theirs);
H3_GGML_ENUMS
