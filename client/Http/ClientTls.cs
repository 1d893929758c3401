using System.Collections.Concurrent;
using System.Globalization;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Client.Http;

/// <summary>
/// The store's TLS settings, applied to every connection it opens (requests, streams, bulk insert
/// and WebSockets alike): the client certificate presented at each handshake, and the check of the
/// server's certificate. The handshake reports a refused server certificate only as "rejected by the
/// callback", so the reason found here is remembered per host and named by <see cref="Explain"/>.
/// </summary>
internal sealed class ClientTls
{
    private readonly X509Certificate2? _certificate;
    private readonly X509Certificate2? _trusted;
    private readonly RemoteCertificateValidationCallback? _validation;
    private readonly ConcurrentDictionary<string, string> _refusals = new(StringComparer.OrdinalIgnoreCase);

    public ClientTls(X509Certificate2? certificate, X509Certificate2? trusted, RemoteCertificateValidationCallback? validation)
    {
        _certificate = certificate;
        _trusted = trusted;
        _validation = validation;
    }

    /// <summary>The client certificate presented at every handshake, or null.</summary>
    public X509Certificate2? Certificate => _certificate;

    public void Apply(SocketsHttpHandler handler) =>
        handler.SslOptions = new SslClientAuthenticationOptions
        {
            ClientCertificates = _certificate is null ? null : [_certificate],
            // Always ours when the server asks: the platform's own choice filters by the issuers the
            // server names, and a server that identifies clients by registration names none.
            LocalCertificateSelectionCallback = _certificate is null ? null : (_, _, _, _, _) => _certificate,
            RemoteCertificateValidationCallback = Validate,
        };

    /// <summary>
    /// The <see cref="CertificateException"/> that <paramref name="failure"/> is when it is a failed
    /// TLS handshake with <paramref name="uri"/>'s server (as <see cref="HttpClient"/> or, wrapped,
    /// <c>ClientWebSocket</c> throws it); null for any other failure.
    /// </summary>
    public CertificateException? Explain(Exception failure, Uri uri)
    {
        var handshake = InnerOf<HttpRequestException>(failure);
        if (handshake is not { HttpRequestError: HttpRequestError.SecureConnectionError })
        {
            return null;
        }

        var server = uri.GetLeftPart(UriPartial.Authority);
        if (_refusals.TryGetValue(uri.IdnHost, out var refusal))
        {
            return new CertificateException($"No TLS connection to {server}: {refusal}", failure);
        }

        var mine = _certificate is null ? "" : $" (DocumentStore.Certificate {Name(_certificate)})";
        return new CertificateException(
            $"The TLS handshake with {server} failed ({Messages(handshake.InnerException ?? handshake)}): the server refused this client's certificate{mine}, or it does not serve https at this address (an unsecured Jackdaw serves http://).",
            failure);
    }

    private bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        var host = (sender as SslStream)?.TargetHostName ?? "";
        var server = certificate as X509Certificate2;
        var refusal = _validation is not null ? AskCallback(sender, certificate, chain, errors, host)
            : _trusted is not null ? CheckAgainstTrusted(server, chain, errors, host)
            : errors == SslPolicyErrors.None ? null
            : Describe(errors, chain, server, host) + ". Trust it with DocumentStore.TrustedServerCertificate (the server's certificate, or the certificate authority that issued it), or add that authority to the operating system's trust store";
        if (refusal is null)
        {
            _refusals.TryRemove(host, out _);
            return true;
        }

        _refusals[host] = $"the server's certificate {(server is null ? "(none)" : Name(server))} is not trusted: {refusal}.";
        return false;
    }

    private string? AskCallback(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors, string host)
    {
        if (_validation!(sender, certificate, chain, errors))
        {
            return null;
        }

        var found = errors == SslPolicyErrors.None ? "found nothing wrong" : "found: " + Describe(errors, chain, certificate as X509Certificate2, host);
        return $"DocumentStore.ServerCertificateValidation refused it (the operating system's check {found})";
    }

    /// <summary>
    /// <see cref="DocumentStore.TrustedServerCertificate"/> instead of the operating system's trust
    /// store: the server's certificate is that one, or its chain ends in it. Its names and dates are
    /// checked as usual.
    /// </summary>
    private string? CheckAgainstTrusted(X509Certificate2? server, X509Chain? sent, SslPolicyErrors errors, string host)
    {
        if (server is null)
        {
            return Describe(SslPolicyErrors.RemoteCertificateNotAvailable, null, null, host);
        }

        var rest = errors & ~SslPolicyErrors.RemoteCertificateChainErrors;
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(_trusted!);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        if (sent is not null)
        {
            chain.ChainPolicy.ExtraStore.AddRange(sent.ChainPolicy.ExtraStore);
        }

        var pinned = server.RawDataMemory.Span.SequenceEqual(_trusted!.RawDataMemory.Span);
        string? problem = null;
        if (!chain.Build(server) && !(pinned && ValidNow(server)))
        {
            problem = pinned
                ? Describe(SslPolicyErrors.RemoteCertificateChainErrors, chain, server, host)
                : $"it is neither DocumentStore.TrustedServerCertificate, {Name(_trusted)}, nor issued by it ({Statuses(chain)})";
        }

        if (rest != SslPolicyErrors.None)
        {
            var names = Describe(rest, null, server, host);
            problem = problem is null ? names : problem + "; " + names;
        }

        return problem;
    }

    private static bool ValidNow(X509Certificate2 certificate)
    {
        var now = DateTime.Now;
        return certificate.NotBefore <= now && now <= certificate.NotAfter;
    }

    private static string Describe(SslPolicyErrors errors, X509Chain? chain, X509Certificate2? server, string host)
    {
        var parts = new List<string>();
        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            parts.Add("the server presented no certificate");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch))
        {
            parts.Add($"it is not issued for '{host}' (it names {(server is null ? "nothing" : NamesOf(server))})");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateChainErrors))
        {
            var statuses = chain is null ? "its chain of trust does not hold" : Statuses(chain);
            if (server is not null && !ValidNow(server))
            {
                statuses += $"; it is valid from {server.NotBefore.ToUniversalTime():yyyy-MM-dd HH:mm} to {server.NotAfter.ToUniversalTime():yyyy-MM-dd HH:mm} UTC";
            }

            parts.Add(statuses);
        }

        return string.Join("; ", parts);
    }

    private static string Statuses(X509Chain chain)
    {
        var statuses = chain.ChainStatus
            .Where(s => s.Status != X509ChainStatusFlags.NoError)
            .Select(s => string.IsNullOrWhiteSpace(s.StatusInformation) ? s.Status.ToString() : $"{s.Status}: {s.StatusInformation.Trim()}")
            .Distinct()
            .ToList();
        return statuses.Count == 0 ? "its chain of trust does not hold" : string.Join(", ", statuses);
    }

    private static string NamesOf(X509Certificate2 certificate)
    {
        var names = new List<string>();
        foreach (var extension in certificate.Extensions)
        {
            if (extension is X509SubjectAlternativeNameExtension alternative)
            {
                names.AddRange(alternative.EnumerateDnsNames());
                names.AddRange(alternative.EnumerateIPAddresses().Select(a => a.ToString()));
            }
        }

        if (names.Count == 0)
        {
            names.Add(certificate.GetNameInfo(X509NameType.DnsName, forIssuer: false));
        }

        return string.Join(", ", names.Select(n => $"'{n}'"));
    }

    /// <summary>A certificate as messages name it: its subject and thumbprint.</summary>
    public static string Name(X509Certificate2 certificate) =>
        string.Create(CultureInfo.InvariantCulture, $"{certificate.Subject} (thumbprint {certificate.Thumbprint})");

    /// <summary><paramref name="e"/> or the first of its inner exceptions that is a <typeparamref name="T"/>.</summary>
    public static T? InnerOf<T>(Exception? e)
        where T : Exception
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is T found)
            {
                return found;
            }
        }

        return null;
    }

    private static string Messages(Exception e)
    {
        var messages = new List<string>();
        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            messages.Add(inner.Message.TrimEnd('.'));
        }

        return string.Join(": ", messages);
    }
}
