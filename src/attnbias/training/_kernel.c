/* The synthetic training step in token coordinates: see kernel.py for the maths.
 *
 * segment() runs iterations t0 .. t1 - 1 of every run of a batch: at each t it checks the
 * exact crossings of 1 - cos(W_t, W_mm), then takes one step (forward in logs, the stable
 * W-gradient e^scale * c, the u-gradient when u is trained, the optimizer's step length in
 * logs, the update), and at t1 it checks the crossings only. Pure C99 and libm, compiled
 * without -ffast-math: IEEE arithmetic, -inf and NaN behave as in the torch reference.
 * Each line mirrors one of attention.forward, gradients.*, losses.*, optimizers.Optimizer.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static double softplus(double x) { /* logaddexp(x, 0) */
    return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double log_neg_slope(int loss, double z) { return loss == 0 ? -z : -softplus(z); }

static double log_value(int loss, double z) {
    if (loss == 0) return -z;
    double x = -z;
    if (x < -20.0) return x - exp(x) / 2.0;
    return log(softplus(x));
}

static double log_abs_expm1(double x, double log_abs_x) {
    if (fabs(x) < 1e-8) return log_abs_x + x / 2.0;
    return log(fabs(expm1(x)));
}

static double sgn(double x) {
    if (x > 0.0) return 1.0;
    if (x < 0.0) return -1.0;
    return x; /* 0 or NaN */
}

static double log_excess_sample(int loss, double g, double delta, double lad, double dsign) {
    if (loss == 0) return -g + log_abs_expm1(delta, lad);
    double log_abs_r = -g + log_abs_expm1(delta, lad) - softplus(-g);
    double r = dsign * exp(log_abs_r);
    if (log_abs_r < -20.0) return log_abs_r - r / 2.0;
    return log(fabs(log1p(r)));
}

static double finite_or_zero(double x) { return x == -INFINITY ? 0.0 : x; }

/* out = M v, M symmetric (m x m), as a sum of columns: vectorises without reordering sums */
static void matvec(const double *restrict M, const double *restrict v, double *restrict out,
                   long m) {
    for (long r = 0; r < m; r++) out[r] = 0.0;
    for (long q = 0; q < m; q++) {
        const double vq = v[q];
        const double *restrict row = M + q * m;
        for (long r = 0; r < m; r++) out[r] += row[r] * vq;
    }
}

enum { S_LOSS, S_RULE, S_PER_BLOCK, S_TRAIN_U, S_OPT_IS_BEST, S_LR_W, S_LR_U, S_HAS_CAP,
       S_LOG_CAP, S_MOMENTUM, S_FSTAR_CODE, S_FSTAR, S_DECAY_W, S_DECAY_U };

int segment(long t0, long t1, const double *settings, long B, long n, long T, long Bp,
            const double *P, const double *K, const double *l0, const double *xu0,
            const double *y, const int64_t *opt, const double *gamma_fixed,
            const double *lag_fixed, const double *gsign_fixed, double *beta, double *z,
            double *mu, double *ku, double *buf_w, double *pbuf_w, double *buf_u,
            double *kbuf_u, const double *m_mm, const double *w0mm, const double *w0sq,
            const double *mm_norm, long n_thr, const double *thresholds, double *first,
            double *first_step, double *max_step) {
    const int loss = (int)settings[S_LOSS], rule = (int)settings[S_RULE];
    const int per_block = settings[S_PER_BLOCK] != 0.0, train_u = settings[S_TRAIN_U] != 0.0;
    const int opt_is_best = settings[S_OPT_IS_BEST] != 0.0;
    const double log_lr_w = log(settings[S_LR_W]), log_lr_u = log(settings[S_LR_U]);
    const int has_cap = settings[S_HAS_CAP] != 0.0;
    const double log_cap = settings[S_LOG_CAP], momentum = settings[S_MOMENTUM];
    const int f_star_code = (int)settings[S_FSTAR_CODE]; /* 0: opt, 1: 0, 2: a number */
    const double f_star = settings[S_FSTAR];
    const double decay_w = settings[S_DECAY_W], decay_u = settings[S_DECAY_U];
    const long nT = n * T;

    double *scratch = malloc(sizeof(double) * (12 * nT + 9 * n));
    if (!scratch) return 1;
    double *la = scratch, *attn = la + nT, *lw = attn + nT, *c = lw + nT, *pc = c + nT;
    double *e = pc + nT, *ke = e + nT, *gam = ke + nT, *lag = gam + nT, *gsign = lag + nT;
    double *csign = gsign + nT, *lad = csign + nT, *dsign = lad + n, *delta = dsign + n, *margin = delta + n;
    double *lns = margin + n, *gopt = lns + n, *tmp = gopt + n, *tmp_sign = tmp + n;
    double *topv = tmp_sign + n;

    for (long b = 0; b < B; b++) {
        const double *Pb = P + (Bp > 1 ? b : 0) * nT * nT;
        const double *Kb = K + (Bp > 1 ? b : 0) * nT * nT;
        const double *l0b = l0 + b * nT, *xu0b = xu0 + b * nT, *yb = y + b * n;
        const int64_t *optb = opt + b * n;
        double *betab = beta + b * nT, *zb = z + b * nT, *mub = mu + b * nT, *kub = ku + b * nT;
        double *bwb = buf_w + b * nT, *pbwb = pbuf_w + b * nT;
        double *bub = buf_u + b * nT, *kbub = kbuf_u + b * nT, *firstb = first + b * n_thr;
        const double *mb = m_mm + b * nT;
        for (long t = t0; t <= t1; t++) {
            /* ---- exact crossings of 1 - cos(W_t, W_mm), before the step at t */
            int pending = 0;
            for (long k = 0; k < n_thr; k++) pending |= isnan(firstb[k]);
            if (pending) {
                double inner = w0mm[b], sq = w0sq[b];
                for (long r = 0; r < nT; r++) {
                    inner += betab[r] * mb[r];
                    sq += betab[r] * (2.0 * l0b[r] + zb[r]);
                }
                double gap = 1.0 - inner / (sqrt(sq) * mm_norm[b]);
                for (long k = 0; k < n_thr; k++)
                    if (isnan(firstb[k]) && gap < thresholds[k]) firstb[k] = (double)t;
            }
            if (t == t1) break;
            /* ---- token scores (every step when u is trained) */
            int is_signed = !opt_is_best;
            const double *gm = train_u ? gam : gamma_fixed + b * nT; /* the scores gamma */
            if (train_u) {
                is_signed = is_signed || t > 0;
                for (long i = 0; i < n; i++)
                    for (long s = 0; s < T; s++)
                        gam[i * T + s] = yb[i] * (xu0b[i * T + s] + kub[i * T + s]);
                for (long i = 0; i < n; i++) {
                    gopt[i] = gam[i * T + optb[i]];
                    for (long s = 0; s < T; s++) {
                        double g = gopt[i] - gam[i * T + s];
                        lag[i * T + s] = log(fabs(g));
                        gsign[i * T + s] = g > 0.0 ? 1.0 : (g < 0.0 ? -1.0 : g);
                    }
                }
            } else {
                const double *lf = lag_fixed + b * nT, *sf = gsign_fixed + b * nT;
                for (long r = 0; r < nT; r++) {
                    lag[r] = lf[r];
                    gsign[r] = sf[r];
                }
                for (long i = 0; i < n; i++) gopt[i] = gamma_fixed[b * nT + i * T + optb[i]];
            }
            /* ---- forward: log softmax, delta in logs, margin */
            for (long i = 0; i < n; i++) {
                double *lai = la + i * T, *ai = attn + i * T;
                const double *lagi = lag + i * T, *gsi = gsign + i * T;
                double top = -INFINITY;
                for (long s = 0; s < T; s++) {
                    lai[s] = l0b[i * T + s] + zb[i * T + s];
                    if (lai[s] > top) top = lai[s];
                }
                double tot = 0.0;
                for (long s = 0; s < T; s++) {
                    lai[s] -= top;
                    ai[s] = exp(lai[s]);
                    tot += ai[s];
                }
                const double lse = log(tot);
                for (long s = 0; s < T; s++) {
                    lai[s] -= lse;
                    ai[s] /= tot;
                }
                top = -INFINITY;
                for (long s = 0; s < T; s++)
                    if (lai[s] + lagi[s] > top) top = lai[s] + lagi[s];
                topv[i] = top;
                if (!is_signed) {
                    if (top == -INFINITY) {
                        lad[i] = -INFINITY;
                    } else {
                        tot = 0.0;
                        for (long s = 0; s < T; s++) tot += exp(lai[s] + lagi[s] - top);
                        lad[i] = log(tot) + top;
                    }
                    dsign[i] = isfinite(lad[i]) ? 1.0 : 0.0;
                    delta[i] = exp(lad[i]);
                } else {
                    top = finite_or_zero(top);
                    tot = 0.0;
                    for (long s = 0; s < T; s++) tot += gsi[s] * exp(lai[s] + lagi[s] - top);
                    lad[i] = log(fabs(tot)) + top;
                    dsign[i] = sgn(tot);
                    delta[i] = dsign[i] * exp(lad[i]);
                }
                margin[i] = gopt[i] - delta[i];
                lns[i] = log_neg_slope(loss, margin[i]);
            }
            /* ---- W gradient in token coordinates: e^scale_w * c, c_is = e^(lns_i + la_is -
             * scale_w) D_is with D_is = sum_t a_it (gamma_it - gamma_is), referred to the token
             * r the attention weights most (gradient_weights.token_coefficients): D_ir is a sum
             * of the small a_it, the others D_ir - (gamma_is - gamma_ir). log|c| goes to lw,
             * sign(D) to csign; scale_w = max log|c|. */
            double scale_w = -INFINITY;
            for (long i = 0; i < n; i++) {
                const double *lai = la + i * T, *gi = gm + i * T;
                double *lci = lw + i * T, *csi = csign + i * T;
                long r = 0;
                for (long s = 1; s < T; s++)
                    if (lai[s] > lai[r]) r = s;
                double top = -INFINITY;
                for (long s = 0; s < T; s++)
                    if (s != r && lai[s] > top) top = lai[s];
                top = finite_or_zero(top);
                double tot = 0.0;
                for (long s = 0; s < T; s++)
                    if (s != r) tot += exp(lai[s] - top) * (gi[s] - gi[r]);
                const double log_abs_dr = log(fabs(tot)) + top, sign_r = sgn(tot);
                const double d_r = sign_r * exp(log_abs_dr);
                for (long s = 0; s < T; s++) {
                    const double diff = gi[s] - gi[r];
                    if (s == r || diff == 0.0) { /* D_r itself, which may underflow: in logs */
                        lci[s] = lns[i] + lai[s] + log_abs_dr;
                        csi[s] = sign_r;
                    } else {
                        const double d = d_r - diff;
                        lci[s] = lns[i] + lai[s] + log(fabs(d));
                        csi[s] = sgn(d);
                    }
                    if (lci[s] > scale_w) scale_w = lci[s];
                }
            }
            const double off = finite_or_zero(scale_w);
            for (long r = 0; r < nT; r++) c[r] = csign[r] * exp(lw[r] - off);
            matvec(Pb, c, pc, nT);
            double sq = 0.0;
            for (long r = 0; r < nT; r++) sq += c[r] * pc[r];
            const double log_norm_w = 0.5 * log(sq / (double)(n * n)) + scale_w;
            /* ---- u gradient: e = coordinates of -(1/n) sum_i w_i y_i x_bar_i */
            double log_norm_u = -INFINITY, scale_u = -INFINITY;
            if (train_u) {
                for (long i = 0; i < n; i++)
                    if (lns[i] > scale_u) scale_u = lns[i];
                const double off_u = finite_or_zero(scale_u);
                for (long i = 0; i < n; i++) {
                    double wu = exp(lns[i] - off_u) * yb[i];
                    for (long s = 0; s < T; s++) e[i * T + s] = -(wu * attn[i * T + s]) / n;
                }
                matvec(Kb, e, ke, nT);
                double sqe = 0.0;
                for (long r = 0; r < nT; r++) sqe += e[r] * ke[r];
                log_norm_u = log(sqrt(sqe)) + scale_u;
            }
            /* ---- step lengths (optimizers.Optimizer._log_step_lengths) */
            double len_w, len_u;
            if (rule == 0) {
                len_w = log_lr_w;
                len_u = log_lr_u;
            } else {
                double nw, nu;
                if (per_block || !train_u) {
                    nw = log_norm_w;
                    nu = log_norm_u;
                } else { /* 0.5 logsumexp(2 ln_w, 2 ln_u) */
                    double a2 = 2.0 * log_norm_w, b2 = 2.0 * log_norm_u;
                    double hi = a2 > b2 ? a2 : b2;
                    if (isnan(a2) || isnan(b2))
                        nw = NAN;
                    else if (isinf(hi))
                        nw = hi;
                    else
                        nw = 0.5 * (log(exp(a2 - hi) + exp(b2 - hi)) + hi);
                    nu = nw;
                }
                if (rule == 1) {
                    len_w = log_lr_w - nw;
                    len_u = log_lr_u - nu;
                } else { /* Polyak: log(L - f*), no step without a positive excess */
                    double ex_log, ex_sign;
                    if (f_star_code == 0) {
                        double top = -INFINITY;
                        for (long i = 0; i < n; i++) {
                            tmp[i] = log_excess_sample(loss, gopt[i], delta[i], lad[i], dsign[i]);
                            tmp_sign[i] = dsign[i];
                            if (tmp[i] > top) top = tmp[i];
                        }
                        top = finite_or_zero(top);
                        double tot = 0.0;
                        for (long i = 0; i < n; i++) tot += tmp_sign[i] * exp(tmp[i] - top);
                        ex_log = log(fabs(tot)) + top - log((double)n);
                        ex_sign = sgn(tot);
                    } else {
                        double top = -INFINITY, log_loss;
                        for (long i = 0; i < n; i++) {
                            tmp[i] = log_value(loss, margin[i]);
                            if (tmp[i] > top) top = tmp[i];
                        }
                        if (isinf(top)) {
                            log_loss = top;
                        } else {
                            double tot = 0.0;
                            for (long i = 0; i < n; i++) tot += exp(tmp[i] - top);
                            log_loss = log(tot) + top;
                        }
                        log_loss -= log((double)n);
                        if (f_star_code == 1) {
                            ex_log = log_loss;
                            ex_sign = 1.0;
                        } else {
                            double ex = exp(log_loss) - f_star;
                            ex_log = log(fabs(ex));
                            ex_sign = sgn(ex);
                        }
                    }
                    if (!(ex_sign > 0.0)) ex_log = -INFINITY;
                    len_w = ex_log - 2.0 * nw;
                    len_u = ex_log - 2.0 * nu;
                }
                if (has_cap) { /* clamp(max=log cap); NaN stays NaN */
                    if (len_w > log_cap) len_w = log_cap;
                    if (len_u > log_cap) len_u = log_cap;
                }
            }
            /* Eq. 10's extra factors (optimizers.Optimizer._decayed): step x (t + 1)^-decay */
            if (decay_w != 0.0) len_w -= decay_w * log((double)(t + 1));
            if (decay_u != 0.0) len_u -= decay_u * log((double)(t + 1));
            if (t == t0) first_step[b] = len_w;
            /* the run's largest finite log step so far, over every step (NaN: none yet) */
            if (isfinite(len_w) && (isnan(max_step[b]) || len_w > max_step[b])) max_step[b] = len_w;
            /* ---- the update: exp(length + log_scale) times the direction; NaN -> no step */
            double coef = exp(len_w + scale_w);
            if (isnan(coef)) coef = 0.0;
            const double h = coef / n;
            if (momentum != 0.0) {
                for (long r = 0; r < nT; r++) {
                    bwb[r] = momentum * bwb[r] + h * c[r];
                    pbwb[r] = momentum * pbwb[r] + h * pc[r];
                    betab[r] -= bwb[r];
                    zb[r] -= pbwb[r];
                }
            } else {
                for (long r = 0; r < nT; r++) {
                    betab[r] -= h * c[r];
                    zb[r] -= h * pc[r];
                }
            }
            if (train_u) {
                double cu = exp(len_u + scale_u);
                if (isnan(cu)) cu = 0.0;
                if (momentum != 0.0) {
                    for (long r = 0; r < nT; r++) {
                        bub[r] = momentum * bub[r] + cu * e[r];
                        kbub[r] = momentum * kbub[r] + cu * ke[r];
                        mub[r] -= bub[r];
                        kub[r] -= kbub[r];
                    }
                } else {
                    for (long r = 0; r < nT; r++) {
                        mub[r] -= cu * e[r];
                        kub[r] -= cu * ke[r];
                    }
                }
            }
        }
    }
    free(scratch);
    return 0;
}
