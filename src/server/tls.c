/* tls.c - checks a certificate and key before libmicrohttpd gets them:
 * its own start-up only fails, while GnuTLS says what is wrong (not PEM, a
 * key that does not match, an encrypted key). */
#include "server/internal.h"

#include <gnutls/gnutls.h>
#include <string.h>

int tls_check(const char *cert, const char *key, fy_error *err)
{
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return fy_err(err, FY_ENOMEM, "TLS: out of memory");
    gnutls_datum_t c = {(unsigned char *)cert, (unsigned)strlen(cert)};
    gnutls_datum_t k = {(unsigned char *)key, (unsigned)strlen(key)};
    int rc = gnutls_certificate_set_x509_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM);
    gnutls_certificate_free_credentials(cred);
    if (rc < 0)
        return fy_err(err, FY_EINVAL, "the TLS certificate and key cannot be used: %s",
                      gnutls_strerror(rc));
    return 0;
}
