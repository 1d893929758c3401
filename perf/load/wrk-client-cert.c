// Gives wrk a TLS client certificate, which it has no option for: an LD_PRELOAD library that
// wraps OpenSSL's SSL_CTX_new (wrk makes one context, for every connection) and loads into that
// context the PEM certificate (chain) in $WRK_CLIENT_CERT and the PEM key in $WRK_CLIENT_KEY (or
// the same file). A server that asks for a client certificate then gets this one, in every full
// handshake; wrk sets no session on a new connection, so each connection is a full handshake.
// Needs no OpenSSL headers nor libssl-dev: every OpenSSL function is looked up at run time.
//   cc -shared -fPIC -O2 -o wrk-client-cert.so perf/load/wrk-client-cert.c -ldl
//   LD_PRELOAD=$PWD/wrk-client-cert.so WRK_CLIENT_CERT=client.pem WRK_CLIENT_KEY=client.key wrk https://...
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_method_st SSL_METHOD;
#define SSL_FILETYPE_PEM 1

static void *need(void *handle, const char *name)
{
    void *f = dlsym(handle, name);
    if (!f) { fprintf(stderr, "wrk-client-cert: %s not found\n", name); exit(1); }
    return f;
}

SSL_CTX *SSL_CTX_new(const SSL_METHOD *method)
{
    SSL_CTX *(*real)(const SSL_METHOD *) = need(RTLD_NEXT, "SSL_CTX_new");
    SSL_CTX *ctx = real(method);
    const char *cert = getenv("WRK_CLIENT_CERT");
    if (!ctx || !cert || !*cert) return ctx;
    const char *key = getenv("WRK_CLIENT_KEY");
    if (!key || !*key) key = cert;
    int (*use_chain)(SSL_CTX *, const char *) = need(RTLD_DEFAULT, "SSL_CTX_use_certificate_chain_file");
    int (*use_key)(SSL_CTX *, const char *, int) = need(RTLD_DEFAULT, "SSL_CTX_use_PrivateKey_file");
    int (*check_key)(const SSL_CTX *) = need(RTLD_DEFAULT, "SSL_CTX_check_private_key");
    if (use_chain(ctx, cert) != 1 || use_key(ctx, key, SSL_FILETYPE_PEM) != 1 || check_key(ctx) != 1) {
        fprintf(stderr, "wrk-client-cert: cannot use certificate %s with key %s\n", cert, key);
        exit(1);
    }
    return ctx;
}
