/* Unit tests of the recorder's lock-free ring (librecorder/ring.c). */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../librecorder/ring.h"

/* Write one record with recognisable fields. */
static void put(fr_ring *r, uint64_t tag) {
  uint64_t id;
  fr_slot *s = fr_ring_claim(r, &id);
  memset(&s->rec, 0, sizeof s->rec);
  s->rec.id = id;
  s->rec.seq = tag;
  s->rec.count = tag * 3;
  fr_ring_publish(s, id);
}

START_TEST(capacity_rounds_up_to_power_of_two) {
  fr_ring r;
  ck_assert_int_eq(fr_ring_init(&r, 1000), 0);
  ck_assert_uint_eq(r.capacity, 1024);
  ck_assert_uint_eq(r.mask, 1023);
  fr_ring_free(&r);
  ck_assert_int_eq(fr_ring_init(&r, 3), 0);
  ck_assert_uint_eq(r.capacity, 16);
  fr_ring_free(&r);
}
END_TEST

START_TEST(snapshot_before_wrap_keeps_everything_in_order) {
  fr_ring r;
  fr_ring_init(&r, 64);
  for (uint64_t i = 0; i < 40; i++) put(&r, 100 + i);
  frz_record out[64];
  uint64_t first = 99;
  uint64_t n = fr_ring_snapshot(&r, out, &first);
  ck_assert_uint_eq(n, 40);
  ck_assert_uint_eq(first, 0);
  for (uint64_t i = 0; i < n; i++) {
    ck_assert_uint_eq(out[i].id, i);
    ck_assert_uint_eq(out[i].seq, 100 + i);
    ck_assert_uint_eq(out[i].count, (100 + i) * 3);
  }
  fr_ring_free(&r);
}
END_TEST

START_TEST(wrap_drops_oldest_and_reports_first_retained) {
  fr_ring r;
  fr_ring_init(&r, 16);
  for (uint64_t i = 0; i < 50; i++) put(&r, i);
  frz_record out[16];
  uint64_t first;
  uint64_t n = fr_ring_snapshot(&r, out, &first);
  ck_assert_uint_eq(n, 16);
  ck_assert_uint_eq(first, 34);
  ck_assert_uint_eq(out[0].seq, 34);
  ck_assert_uint_eq(out[15].seq, 49);
  ck_assert_ptr_null(fr_ring_get(&r, 33)); /* overwritten */
  ck_assert_ptr_nonnull(fr_ring_get(&r, 34));
  ck_assert_ptr_null(fr_ring_get(&r, 50)); /* not written yet */
  fr_ring_free(&r);
}
END_TEST

START_TEST(unpublished_slot_is_not_in_snapshot) {
  fr_ring r;
  fr_ring_init(&r, 16);
  put(&r, 1);
  uint64_t id;
  fr_slot *s = fr_ring_claim(&r, &id); /* claimed, being written */
  s->rec.seq = 2;
  put(&r, 3);
  frz_record out[16];
  uint64_t first;
  uint64_t n = fr_ring_snapshot(&r, out, &first);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(out[0].seq, 1);
  ck_assert_uint_eq(out[1].seq, 3);
  ck_assert_ptr_null(fr_ring_get(&r, id));
  fr_ring_publish(s, id);
  ck_assert_ptr_eq(fr_ring_get(&r, id), s);
  fr_ring_free(&r);
}
END_TEST

START_TEST(lapped_writer_cannot_publish_stale_record) {
  fr_ring r;
  fr_ring_init(&r, 16);
  uint64_t old_id;
  fr_slot *old = fr_ring_claim(&r, &old_id); /* slow writer */
  for (int i = 0; i < 16; i++) put(&r, 500 + (uint64_t)i); /* laps it */
  fr_ring_publish(old, old_id);                        /* too late */
  ck_assert_ptr_null(fr_ring_get(&r, old_id));
  ck_assert_ptr_eq(fr_ring_get(&r, 16), old);
  fr_ring_free(&r);
}
END_TEST

typedef struct {
  fr_ring *r;
  uint64_t tag;
  int n;
} writer_arg;

static void *writer(void *p) {
  writer_arg *a = p;
  for (int i = 0; i < a->n; i++) put(a->r, a->tag);
  return NULL;
}

START_TEST(concurrent_writers_lose_nothing_without_wrap) {
  enum { T = 4, N = 5000 };
  fr_ring r;
  fr_ring_init(&r, T * N);
  pthread_t th[T];
  writer_arg args[T];
  for (int t = 0; t < T; t++) {
    args[t] = (writer_arg){&r, (uint64_t)t + 1, N};
    pthread_create(&th[t], NULL, writer, &args[t]);
  }
  for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
  frz_record *out = calloc(r.capacity, sizeof *out);
  uint64_t first;
  uint64_t n = fr_ring_snapshot(&r, out, &first);
  ck_assert_uint_eq(n, (uint64_t)T * N);
  int per[T + 1] = {0};
  for (uint64_t i = 0; i < n; i++) {
    ck_assert_uint_eq(out[i].id, i);
    ck_assert(out[i].seq >= 1 && out[i].seq <= T);
    ck_assert_uint_eq(out[i].count, out[i].seq * 3);
    per[out[i].seq]++;
  }
  for (int t = 1; t <= T; t++) ck_assert_int_eq(per[t], N);
  free(out);
  fr_ring_free(&r);
}
END_TEST

static Suite *ring_suite(void) {
  Suite *s = suite_create("ring");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, capacity_rounds_up_to_power_of_two);
  tcase_add_test(tc, snapshot_before_wrap_keeps_everything_in_order);
  tcase_add_test(tc, wrap_drops_oldest_and_reports_first_retained);
  tcase_add_test(tc, unpublished_slot_is_not_in_snapshot);
  tcase_add_test(tc, lapped_writer_cannot_publish_stale_record);
  tcase_add_test(tc, concurrent_writers_lose_nothing_without_wrap);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(ring_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
