/* Unit tests of comm identity hashing and process identity from the
 * launcher's environment (librecorder/identity.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../librecorder/identity.h"

START_TEST(same_unique_id_same_comm_id_on_every_rank) {
  unsigned char id[128];
  for (int i = 0; i < 128; i++) id[i] = (unsigned char)(i * 7 + 1);
  unsigned char copy[128];
  memcpy(copy, id, sizeof id);
  uint64_t a = fr_comm_id_from_unique(id, sizeof id, 8);
  uint64_t b = fr_comm_id_from_unique(copy, sizeof copy, 8);
  ck_assert_uint_eq(a, b);
  ck_assert_uint_ne(a, 0);
}
END_TEST

START_TEST(unique_id_bytes_and_size_change_the_comm_id) {
  unsigned char id[128] = {0};
  uint64_t base = fr_comm_id_from_unique(id, sizeof id, 8);
  ck_assert_uint_ne(base, fr_comm_id_from_unique(id, sizeof id, 4));
  for (int i = 0; i < 128; i += 17) {
    id[i] ^= 1;
    ck_assert_uint_ne(base, fr_comm_id_from_unique(id, sizeof id, 8));
    id[i] ^= 1;
  }
}
END_TEST

START_TEST(split_ids_depend_on_parent_index_and_color) {
  uint64_t p = 0x1234567890abcdefull, q = 0x1234567890abcdeeull;
  uint64_t a = fr_comm_id_from_split(p, 0, 1);
  ck_assert_uint_eq(a, fr_comm_id_from_split(p, 0, 1));
  ck_assert_uint_ne(a, fr_comm_id_from_split(p, 1, 1));
  ck_assert_uint_ne(a, fr_comm_id_from_split(p, 0, 2));
  ck_assert_uint_ne(a, fr_comm_id_from_split(q, 0, 1));
  ck_assert_uint_ne(fr_comm_id_from_split(p, 0, -1), fr_comm_id_from_split(p, 0, 0));
}
END_TEST

START_TEST(few_collisions_over_many_splits) {
  enum { N = 4096 };
  uint64_t *v = malloc(N * sizeof *v);
  for (int i = 0; i < N; i++) v[i] = fr_comm_id_from_split(42, (uint64_t)i / 64, i % 64);
  int dup = 0;
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++) dup += v[i] == v[j];
  ck_assert_int_eq(dup, 0);
  free(v);
}
END_TEST

static void clear_rank_env(void) {
  const char *n[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
                     "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                     "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                     "FR_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"};
  for (size_t i = 0; i < sizeof n / sizeof n[0]; i++) unsetenv(n[i]);
}

START_TEST(global_rank_follows_launcher_precedence) {
  clear_rank_env();
  ck_assert_int_eq(fr_env_global_rank(), -1);
  setenv("SLURM_PROCID", "7", 1);
  ck_assert_int_eq(fr_env_global_rank(), 7);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  ck_assert_int_eq(fr_env_global_rank(), 3);
  setenv("RANK", "12", 1);
  ck_assert_int_eq(fr_env_global_rank(), 12);
  setenv("RANK", "12x", 1); /* malformed: skipped, next one used */
  ck_assert_int_eq(fr_env_global_rank(), 3);
  setenv("RANK", "-1", 1);
  ck_assert_int_eq(fr_env_global_rank(), 3);
  clear_rank_env();
}
END_TEST

START_TEST(world_size_and_local_rank) {
  clear_rank_env();
  setenv("WORLD_SIZE", "16", 1);
  setenv("SLURM_LOCALID", "2", 1);
  ck_assert_int_eq(fr_env_world_size(), 16);
  ck_assert_int_eq(fr_env_local_rank(), 2);
  clear_rank_env();
}
END_TEST

START_TEST(job_id_precedence_and_sanitising) {
  char buf[64];
  clear_rank_env();
  fr_env_job_id(buf, sizeof buf);
  ck_assert_str_eq(buf, "");
  setenv("TORCHELASTIC_RUN_ID", "none", 1); /* torchrun without --rdzv_id: no job id */
  fr_env_job_id(buf, sizeof buf);
  ck_assert_str_eq(buf, "");
  setenv("TORCHELASTIC_RUN_ID", "abc/../x y", 1);
  fr_env_job_id(buf, sizeof buf);
  ck_assert_str_eq(buf, "abc_.._x_y");
  setenv("SLURM_JOB_ID", "991", 1);
  fr_env_job_id(buf, sizeof buf);
  ck_assert_str_eq(buf, "991");
  setenv("FR_JOB_ID", ".hidden", 1);
  fr_env_job_id(buf, sizeof buf);
  ck_assert_str_eq(buf, "_hidden");
  clear_rank_env();
}
END_TEST

static Suite *identity_suite(void) {
  Suite *s = suite_create("identity");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, same_unique_id_same_comm_id_on_every_rank);
  tcase_add_test(tc, unique_id_bytes_and_size_change_the_comm_id);
  tcase_add_test(tc, split_ids_depend_on_parent_index_and_color);
  tcase_add_test(tc, few_collisions_over_many_splits);
  tcase_add_test(tc, global_rank_follows_launcher_precedence);
  tcase_add_test(tc, world_size_and_local_rank);
  tcase_add_test(tc, job_id_precedence_and_sanitising);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(identity_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
