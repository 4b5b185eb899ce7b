/*
 * uintr-safepoint: the GCC plugin that puts libuintr's safepoints into the
 * code it compiles (uintr-safepoint(7), issue 14).
 *
 *     gcc -fplugin=.../uintr_safepoint.so -O2 -c prog.c
 *
 * At every function entry and at every loop back-edge (the loop's latch;
 * but see "bounded" below) the plugin inserts the check of src/safepoint.c:
 *
 *     p = uintr_safepoint_word;          TLS pointer, initial-exec
 *     if (*(volatile u64 *)p != 0)       a branch, probability very unlikely
 *         uintr_safepoint();             a cold block: libuintr's delivery
 *
 * The pointer leads to a static zero except in a receiver in the
 * instrumented state (uintr_set_safepoints(3)), where it leads to the
 * receiver's PIR: the branch is taken only while something is posted.
 *
 * Where in the pipeline.  One GIMPLE pass, right before "optimized" (the
 * last GIMPLE pass, pass_cleanup_cfg_post_optimizing), at -O0 as at -O3:
 *  - it runs at every optimization level (so does the SSA form it works on;
 *    at -O0 the pipeline still goes through SSA and "optimized");
 *  - the loops it sees are the loops of the final code: after unrolling,
 *    vectorization, loop distribution and inlining, so a check costs one
 *    per iteration of the loop that really runs, and the optimizers never
 *    see the volatile load and the call (which would stop vectorization,
 *    if-conversion and store motion had they been there earlier);
 *  - loops are then recomputed by loop_optimizer_init (GCC keeps them from
 *    "cfg" on, but a pass may leave them needing a fix-up), with simple
 *    latches: each latch a block of its own that jumps to the header.
 * What the late position gives up: nothing moves the TLS pointer load out
 * of the loop (it stays one L1 load per check; the call in the cold block
 * could change the pointer, and so does uintr_set_safepoints).
 *
 * What is not instrumented:
 *  - a function with __attribute__((uintr_no_safepoint)) (the plugin
 *    registers the attribute, so gcc does not warn about it; it also
 *    defines __UINTR_SAFEPOINTS__ so a header can tell when it is loaded);
 *  - every function of a file named by -fplugin-arg-uintr_safepoint-exclude=
 *    PATTERN[:PATTERN...] (fnmatch(3) against the main input file name and
 *    against its last component);
 *  - uintr_safepoint itself (a program that defines its own);
 *  - functions with no_instrument_function (the program says "keep
 *    instrumentation out", as for -finstrument-functions), interrupt
 *    (x86 interrupt handlers: -muintr handlers run with UIF = 0 and save
 *    every register they use; a call would make them save them all), naked
 *    (no frame: nothing may be added) and no_caller_saved_registers (code
 *    of the same kind as interrupt handlers).
 * Options: -fplugin-arg-uintr_safepoint-exclude=PATTERNS (above),
 * -fplugin-arg-uintr_safepoint-no-entry (latches only),
 * -fplugin-arg-uintr_safepoint-bounded=N (an innermost loop known to run at
 * most N times per entry gets no latch check; default 256, 0: every loop),
 * -fplugin-arg-uintr_safepoint-verbose (a note per instrumented function).
 * (The plugin's name in these options has an underscore: GCC ends the name
 * at the first '-', so the file is uintr_safepoint.so.)
 */
#include "gcc-plugin.h"
#include "plugin-version.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfghooks.h"
#include "cfgloop.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimplify-me.h"
#include "tree-ssa.h"
#include "ssa.h"
#include "tree-into-ssa.h"
#include "stringpool.h"
#include "attribs.h"
#include "cgraph.h"
#include "diagnostic.h"

#include <fnmatch.h>
#include <string.h>

/* Only the C family's compilers (cc1, cc1plus) have a preprocessor: weak,
 * so that the plugin also loads where there is none (lto1). */
struct cpp_reader;
extern cpp_reader *parse_in __attribute__((weak));
extern void cpp_define(cpp_reader *, const char *) __attribute__((weak));

int plugin_is_GPL_compatible;

static const char *exclude_patterns; /* -fplugin-arg-...-exclude= */
static bool no_entry;                /* -fplugin-arg-...-no-entry */
static bool verbose;                 /* -fplugin-arg-...-verbose */
static long bounded = 256;           /* -fplugin-arg-...-bounded=N */
static int file_excluded = -1;       /* main_input_filename matched (-1: not yet known) */

/* The decls the checks use: found in the unit (a program that includes
 * <uintr.h>) or made here, once per unit. */
static GTY(()) tree word_decl; /* extern __thread const volatile u64 *uintr_safepoint_word */
static GTY(()) tree call_decl; /* extern void uintr_safepoint (void) */

static const struct ggc_root_tab gt_uintr_roots[] = {
	{ &word_decl, 1, sizeof(word_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
	{ &call_decl, 1, sizeof(call_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
	LAST_GGC_ROOT_TAB
};

/* __attribute__((uintr_no_safepoint)): on function declarations only. */
static tree handle_no_safepoint(tree *node, tree name, tree, int, bool *no_add)
{
	if (TREE_CODE(*node) != FUNCTION_DECL) {
		warning(OPT_Wattributes, "%qE attribute applies to functions only", name);
		*no_add = true;
	}
	return NULL_TREE;
}

static const struct attribute_spec no_safepoint_attr = {
	"uintr_no_safepoint", 0, 0, true, false, false, false, handle_no_safepoint, NULL
};

static void register_attributes(void *, void *)
{
	register_attribute(&no_safepoint_attr);
}

/* Before the first line is parsed (the C family's pragma registration
 * runs then): the macro that says the plugin is loaded. */
static void define_macro(void *, void *)
{
	if (&parse_in && cpp_define && parse_in)
		cpp_define(parse_in, "__UINTR_SAFEPOINTS__=1");
}

static bool matches(const char *patterns, const char *name)
{
	const char *base = strrchr(name, '/');
	char buf[4096];

	base = base ? base + 1 : name;
	while (*patterns) {
		size_t n = strcspn(patterns, ":");

		if (n > 0 && n < sizeof(buf)) {
			memcpy(buf, patterns, n);
			buf[n] = '\0';
			if (fnmatch(buf, name, 0) == 0 || fnmatch(buf, base, 0) == 0)
				return true;
		}
		patterns += n;
		if (*patterns == ':')
			patterns++;
	}
	return false;
}

/* A decl of the unit with this assembler name, if the program declared it
 * (it includes <uintr.h>); else NULL_TREE. */
static tree unit_decl(const char *name)
{
	symtab_node *n = symtab_node::get_for_asmname(get_identifier(name));

	return n ? n->decl : NULL_TREE;
}

static void make_decls(void)
{
	if (!word_decl) {
		word_decl = unit_decl("uintr_safepoint_word");
		if (!word_decl || TREE_CODE(word_decl) != VAR_DECL) {
			tree target = build_qualified_type(long_long_unsigned_type_node,
							   TYPE_QUAL_CONST | TYPE_QUAL_VOLATILE);

			word_decl = build_decl(UNKNOWN_LOCATION, VAR_DECL,
					       get_identifier("uintr_safepoint_word"),
					       build_pointer_type(target));
			TREE_PUBLIC(word_decl) = 1;
			DECL_EXTERNAL(word_decl) = 1;
			TREE_STATIC(word_decl) = 0;
			DECL_ARTIFICIAL(word_decl) = 1;
			set_decl_tls_model(word_decl, TLS_MODEL_INITIAL_EXEC);
			varpool_node::get_create(word_decl);
		}
	}
	if (!call_decl) {
		call_decl = unit_decl("uintr_safepoint");
		if (!call_decl || TREE_CODE(call_decl) != FUNCTION_DECL) {
			tree type = build_function_type_list(void_type_node, NULL_TREE);

			call_decl = build_fn_decl("uintr_safepoint", type);
			TREE_PUBLIC(call_decl) = 1;
			DECL_EXTERNAL(call_decl) = 1;
			DECL_ARTIFICIAL(call_decl) = 1;
			/* The call is the rare path: let gcc lay it out so. */
			DECL_ATTRIBUTES(call_decl) = tree_cons(get_identifier("cold"), NULL_TREE,
							       NULL_TREE);
		}
	}
}

/*
 * Insert the check at the start of BB, which must have a single
 * predecessor-independent place to put it (an empty latch, or the block
 * made on the entry edge).  BB ends up as
 *
 *     bb:    p = uintr_safepoint_word; w = *p; if (w != 0) goto cold; else goto join;
 *     cold:  uintr_safepoint ();  (falls to join)
 *     join:  what bb held before
 */
static void insert_check(basic_block bb)
{
	tree ptr_type = TREE_TYPE(word_decl);
	tree word_type = TREE_TYPE(ptr_type);
	gimple_stmt_iterator gsi = gsi_after_labels(bb);
	tree p = make_ssa_name(ptr_type);
	tree w = make_ssa_name(TYPE_MAIN_VARIANT(word_type));
	tree mem;
	gassign *load_p, *load_w;
	gcond *cond;
	gcall *call;
	edge e_join, e_cold, e_back;
	basic_block cold, join;
	location_t loc = UNKNOWN_LOCATION;

	/* The check is counted at the loop's or function's first line. */
	if (!gsi_end_p(gsi))
		loc = gimple_location(gsi_stmt(gsi));

	load_p = gimple_build_assign(p, word_decl);
	mem = build2(MEM_REF, word_type, p, build_int_cst(ptr_type, 0));
	TREE_THIS_VOLATILE(mem) = 1;
	TREE_SIDE_EFFECTS(mem) = 1;
	load_w = gimple_build_assign(w, mem);
	gimple_set_has_volatile_ops(load_w, true);
	cond = gimple_build_cond(NE_EXPR, w, build_int_cst(TREE_TYPE(w), 0), NULL_TREE,
				 NULL_TREE);
	gimple_set_location(load_p, loc);
	gimple_set_location(load_w, loc);
	gimple_set_location(cond, loc);
	gsi_insert_before(&gsi, load_p, GSI_SAME_STMT);
	gsi_insert_before(&gsi, load_w, GSI_SAME_STMT);
	gsi_insert_before(&gsi, cond, GSI_SAME_STMT);

	/* bb -> join: everything after the condition moves to join (and a
	 * latch split this way keeps join as the loop's latch). */
	e_join = split_block(bb, cond);
	join = e_join->dest;
	e_join->flags &= ~EDGE_FALLTHRU;
	e_join->flags |= EDGE_FALSE_VALUE;

	cold = create_empty_bb(bb);
	add_bb_to_loop(cold, bb->loop_father);
	e_cold = make_edge(bb, cold, EDGE_TRUE_VALUE);
	e_cold->probability = profile_probability::very_unlikely();
	e_join->probability = e_cold->probability.invert();
	cold->count = bb->count.apply_probability(e_cold->probability);
	e_back = make_single_succ_edge(cold, join, EDGE_FALLTHRU);
	(void)e_back;

	call = gimple_build_call(call_decl, 0);
	gimple_set_location(call, loc);
	gimple_stmt_iterator cg = gsi_start_bb(cold);
	gsi_insert_after(&cg, call, GSI_NEW_STMT);
	cgraph_node::get(current_function_decl)
		->create_edge(cgraph_node::get_create(call_decl), call, cold->count);
}

static bool has_attr(tree fn, const char *name)
{
	return lookup_attribute(name, DECL_ATTRIBUTES(fn)) != NULL_TREE;
}

static bool wanted(function *fun)
{
	tree fn = fun->decl;
	const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fn));

	if (file_excluded < 0)
		file_excluded = exclude_patterns && main_input_filename &&
				matches(exclude_patterns, main_input_filename);
	if (file_excluded || !strcmp(name, "uintr_safepoint"))
		return false;
	return !has_attr(fn, "uintr_no_safepoint") && !has_attr(fn, "no_instrument_function") &&
	       !has_attr(fn, "interrupt") && !has_attr(fn, "naked") &&
	       !has_attr(fn, "no_caller_saved_registers");
}

static const pass_data safepoint_pass_data = {
	GIMPLE_PASS,
	"uintr_safepoint",
	OPTGROUP_NONE,
	TV_NONE,
	PROP_gimple_any | PROP_cfg | PROP_ssa,
	0,
	0,
	0,
	TODO_update_ssa | TODO_cleanup_cfg,
};

class safepoint_pass : public gimple_opt_pass {
public:
	safepoint_pass(gcc::context *ctx) : gimple_opt_pass(safepoint_pass_data, ctx) {}
	bool gate(function *fun) final override { return wanted(fun); }
	unsigned int execute(function *fun) final override;
};

unsigned int safepoint_pass::execute(function *fun)
{
	auto_vec<basic_block> latches;
	unsigned int n, skipped = 0;

	make_decls();
	/* Simple latches: each loop's latch is a block of its own whose one
	 * successor is the header, so the check runs once per back-edge. */
	loop_optimizer_init(LOOPS_HAVE_SIMPLE_LATCHES | LOOPS_HAVE_PREHEADERS);
	for (auto loop : loops_list(fun, 0)) {
		if (!loop->latch || loop->latch == ENTRY_BLOCK_PTR_FOR_FN(fun))
			continue;
		/* An innermost loop that GCC knows runs at most `bounded`
		 * times per entry needs no check of its own: the time between
		 * two checks stays bounded by the code of its body (its calls
		 * have their own checks), and the enclosing loop's latch or
		 * the code after it checks.  (A 128-iteration inner product
		 * then costs nothing; bounds are known from -O1 on.) */
		if (!loop->inner && bounded > 0) {
			HOST_WIDE_INT max = get_max_loop_iterations_int(loop);

			if (max >= 0 && max <= bounded) {
				skipped++;
				continue;
			}
		}
		latches.safe_push(loop->latch);
	}
	/* The CFG changes below leave no dominator information to update. */
	free_dominance_info(CDI_DOMINATORS);
	free_dominance_info(CDI_POST_DOMINATORS);
	for (basic_block bb : latches)
		insert_check(bb);
	n = latches.length();
	if (!no_entry) {
		/* A block of its own on the entry edge: a function that starts
		 * with a loop gets the check outside it. */
		basic_block first = split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun)));

		insert_check(first);
		n++;
	}
	loops_state_set(fun, LOOPS_NEED_FIXUP);
	loop_optimizer_finalize(fun);
	/* The new loads and the call have virtual operands to rename. */
	mark_virtual_operands_for_renaming(fun);
	if (verbose)
		inform(DECL_SOURCE_LOCATION(fun->decl),
		       "uintr-safepoint: %u safepoints in %qD (%u bounded loops without)", n,
		       fun->decl, skipped);
	return 0;
}

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
	struct register_pass_info pass;
	int i;

	if (!plugin_default_version_check(version, &gcc_version)) {
		error("uintr-safepoint: built for gcc %s, loaded by gcc %s",
		      gcc_version.basever, version->basever);
		return 1;
	}
	for (i = 0; i < info->argc; i++) {
		const char *key = info->argv[i].key, *val = info->argv[i].value;

		if (!strcmp(key, "exclude") && val)
			exclude_patterns = xstrdup(val);
		else if (!strcmp(key, "no-entry"))
			no_entry = true;
		else if (!strcmp(key, "verbose"))
			verbose = true;
		else if (!strcmp(key, "bounded") && val)
			bounded = strtol(val, NULL, 10);
		else
			error("uintr-safepoint: unknown argument %qs (exclude=PATTERNS, "
			      "no-entry, bounded=N, verbose)", key);
	}
	pass.pass = new safepoint_pass(g);
	pass.reference_pass_name = "optimized";
	pass.ref_pass_instance_number = 1;
	pass.pos_op = PASS_POS_INSERT_BEFORE;
	register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
	register_callback(info->base_name, PLUGIN_ATTRIBUTES, register_attributes, NULL);
	register_callback(info->base_name, PLUGIN_PRAGMAS, define_macro, NULL);
	register_callback(info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
			  (void *)gt_uintr_roots);
	return 0;
}
