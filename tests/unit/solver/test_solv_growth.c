/* libsolv's arrays grow in amortised O(1) per element in every build menv makes, the
 * sanitizer builds included (solver/solv_realloc.c): appending n elements with solv_extend()
 * (as solver_addrule() appends rules) or pushing n Ids on a Queue (which grows by 64 at a
 * time) moves the block O(log n) times, never once per block. Under ASan, whose realloc
 * always moves, libsolv's own realloc moved every block (3,125 moves for 200,000 rules,
 * quadratic copying), which kept solving the python-3.9 subchannel past solver.reachable's
 * 1500 s limit there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MENV_ASAN 1
#endif
#elif defined(__SANITIZE_ADDRESS__)
#define MENV_ASAN 1
#endif
#ifdef MENV_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <solv/queue.h>
#include <solv/rules.h>
#include <solv/util.h>

#define N 200000

/* solv_extend() rounds the size it asks for up to 1/32 of the power of two above it (past
 * 32 blocks), so it asks for at most 32 sizes per doubling: 18 doublings reach N, 576 sizes,
 * each of which may move the block once (glibc's realloc moves a Queue about 10 times). A
 * move at each block would be N / 64 = 3,125 moves one at a time, N / 32 = 6,250 five at a
 * time, N / 64 = 3,125 for the Queue. */
#define MAX_MOVES 576

/* Appends N rule-sized elements nmemb at a time, as libsolv does with block-1 = block;
 * returns how many times the array moved (stopping past MAX_MOVES: the quadratic case takes
 * minutes under ASan) and checks every element kept its value. */
static int append(size_t nmemb, size_t block)
{
	Rule *r = NULL;
	size_t len = 0;
	int moves = 0;

	while (len < N && moves <= MAX_MOVES) {
		Rule *was = r;
		r = solv_extend(r, len, nmemb, sizeof(*r), block);
		if (was && r != was)
			moves++;
		for (size_t i = 0; i < nmemb; i++, len++)
			r[len].p = (Id)len;
	}
	for (size_t i = 0; i < len; i++)
		if (r[i].p != (Id)i)
			fail_msg("element %zu holds %d after %d moves", i, (int)r[i].p, moves);
	solv_free(r);
	return moves;
}

/* solver_addrule(): one rule at a time, RULES_BLOCK 63 */
static void rules_one_at_a_time(void **state)
{
	(void)state;
	int moves = append(1, 63);
	print_message("%d rules appended one at a time: %d moves\n", N, moves);
	assert_in_range(moves, 0, MAX_MOVES);
}

/* several at a time (queue_insertn, pool_addfileprovides, repodata), a smaller block */
static void several_at_a_time(void **state)
{
	(void)state;
	int moves = append(5, 31);
	print_message("%d elements appended 5 at a time: %d moves\n", N, moves);
	assert_in_range(moves, 0, MAX_MOVES);
}

/* a Queue of N Ids, pushed one at a time (the solver's work queues) */
static void queue_pushes(void **state)
{
	(void)state;
	Queue q;
	Id *was = NULL;
	int moves = 0;

	queue_init(&q);
	for (Id i = 0; i < N && moves <= MAX_MOVES; i++) {
		queue_push(&q, i);
		if (was && q.alloc != was)
			moves++;
		was = q.alloc;
	}
	for (int i = 0; i < q.count; i++)
		if (q.elements[i] != i)
			fail_msg("element %d holds %d after %d moves", i, (int)q.elements[i],
			         moves);
	print_message("%d Ids pushed on a Queue: %d moves\n", q.count, moves);
	queue_free(&q);
	assert_in_range(moves, 0, MAX_MOVES);
}

#ifdef MENV_ASAN
/* the room kept past the size libsolv asked for stays out of bounds for ASan */
static void asan_bounds_kept(void **state)
{
	(void)state;
	char *p = solv_malloc(100);
	p = solv_realloc(p, 1000);
	assert_false(__asan_address_is_poisoned(p + 999));
	assert_true(__asan_address_is_poisoned(p + 1000));
	p = solv_realloc(p, 1001); /* grown by half: kept for the next steps */
	assert_true(__asan_address_is_poisoned(p + 1001));
	assert_ptr_equal(solv_realloc(p, 1400), p);
	assert_false(__asan_address_is_poisoned(p + 1399));
	assert_true(__asan_address_is_poisoned(p + 1400));
	assert_ptr_equal(solv_realloc(p, 900), p); /* shrunk, the rest poisoned again */
	assert_true(__asan_address_is_poisoned(p + 900));
	solv_free(p);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(rules_one_at_a_time),
	        cmocka_unit_test(several_at_a_time),
	        cmocka_unit_test(queue_pushes),
#ifdef MENV_ASAN
	        cmocka_unit_test(asan_bounds_kept),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
