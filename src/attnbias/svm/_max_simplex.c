/* The pivots of svm.max_simplex (the max-norm u-SVM's LP): the bounded-variable primal
 * simplex with steepest-edge pricing on the dense m x N tableau, step for step the numpy
 * loop of max_simplex._numpy_pivots (its reference in tests). In numpy a step is some 30
 * calls on 20 x 121 arrays, 20 to 29 us of call overhead each; here the same arithmetic
 * runs in a few microseconds. The start, and the answer recomputed from the final basis and
 * checked, stay in Python (max_simplex.simplex_svm). C99 and libm; built by c_library. */

#include <math.h>
#include <stdint.h>

enum { OPTIMAL = 0, OUT_OF_PIVOTS = 1, UNBOUNDED = 2 };

/* T (m x N, row major): B^-1 A; r (N): the reduced costs; x (N): the point; direction (N):
 * +1 nonbasic at its lower bound, -1 at its upper, 0 basic; basis (m): the basic columns;
 * lower, upper (N): the bounds (+-inf where there is none); norms (N), rate (m): scratch.
 * `optimal`: the pricing's threshold (a step improves by more); `pivot_tolerance`: a
 * tableau entry below this fraction of its column's largest does not bound a step. Runs at most `budget`
 * steps (pivots and bound flips); *steps: how many it took. Returns OPTIMAL,
 * OUT_OF_PIVOTS or UNBOUNDED (an improving edge no bound stops). */
int max_simplex(long m, long N, double *T, double *r, double *x, double *direction,
                int64_t *basis, const double *lower, const double *upper, long budget,
                double optimal, double pivot_tolerance, double *norms, double *rate,
                long *steps) {
    for (long step = 0; step < budget; step++) {
        *steps = step;
        /* steepest edge: each column's rate of improvement over its tableau column's
         * length; the first smallest, as numpy's argmin takes it */
        for (long j = 0; j < N; j++) norms[j] = 1.0;
        for (long i = 0; i < m; i++) {
            const double *row = T + i * N;
            for (long j = 0; j < N; j++) norms[j] += row[j] * row[j];
        }
        long q = 0;
        double best = INFINITY;
        for (long j = 0; j < N; j++) {
            double score = direction[j] * r[j] / sqrt(norms[j]);
            if (score < best) best = score, q = j;
        }
        if (!(best < -optimal)) return OPTIMAL;
        /* the ratio test: how far x_q may move away from its bound before a basic variable
         * reaches one of its own */
        double dq = direction[q], largest = 0.0;
        for (long i = 0; i < m; i++) {
            rate[i] = -dq * T[i * N + q];
            if (fabs(rate[i]) > largest) largest = fabs(rate[i]);
        }
        double tiny = pivot_tolerance * largest, limit = INFINITY;
        long p = 0;
        for (long i = 0; i < m; i++) {
            double bound = INFINITY;
            int64_t b = basis[i];
            if (rate[i] < -tiny) bound = (lower[b] - x[b]) / rate[i];
            else if (rate[i] > tiny) bound = (upper[b] - x[b]) / rate[i];
            if (bound < limit) limit = bound, p = i;
        }
        double own = upper[q] - lower[q];
        double theta = fmax(fmin(limit, own), 0.0);
        if (!isfinite(theta)) return UNBOUNDED;
        for (long i = 0; i < m; i++) x[basis[i]] += theta * rate[i];
        x[q] += theta * dq;
        if (own <= limit) { /* x_q reaches its other bound first: a bound flip */
            direction[q] = -dq;
            continue;
        }
        /* the pivot: x_q enters at row p, the basic variable there leaves at its bound */
        int64_t leaving = basis[p];
        int at_lower = rate[p] < 0.0;
        x[leaving] = at_lower ? lower[leaving] : upper[leaving];
        direction[leaving] = at_lower ? 1.0 : -1.0;
        direction[q] = 0.0;
        double *row = T + p * N, pivot = row[q];
        for (long j = 0; j < N; j++) row[j] /= pivot;
        for (long i = 0; i < m; i++) {
            if (i == p) continue;
            double factor = T[i * N + q];
            double *other = T + i * N;
            for (long j = 0; j < N; j++) other[j] -= factor * row[j];
        }
        double rq = r[q];
        for (long j = 0; j < N; j++) r[j] -= rq * row[j];
        basis[p] = q;
    }
    *steps = budget;
    return OUT_OF_PIVOTS;
}
