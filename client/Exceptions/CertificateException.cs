namespace Jackdaw.Client;

/// <summary>
/// No TLS connection could be made to the server, so nothing was sent: the server's certificate is
/// not trusted (not issued by a certificate authority the operating system trusts, nor by
/// <see cref="DocumentStore.TrustedServerCertificate"/>; expired; not issued for the URL's host; or
/// refused by <see cref="DocumentStore.ServerCertificateValidation"/>), or the handshake itself failed
/// (the server refused this client's certificate, or does not serve https at that address).
/// <see cref="Exception.Message"/> names the certificate (subject and thumbprint) and the cause.
/// </summary>
public sealed class CertificateException(string message, Exception? innerException)
    : JackdawException(message, innerException);
