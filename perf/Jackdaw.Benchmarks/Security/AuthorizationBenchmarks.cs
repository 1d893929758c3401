using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using BenchmarkDotNet.Attributes;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging.Abstractions;

namespace Jackdaw.Benchmarks.Security;

/// <summary>
/// Issue 28: what authorization costs a request, GET of a document (<c>DatabaseRead</c> on
/// <c>/databases/*/docs</c>). The baseline is the handler as an unsecured server binds it (bare);
/// the others are the same handler as <see cref="RequestAuthorization"/> wraps it on a secured
/// server, with the request's client certificate and its connection's cached identity as Kestrel
/// gives them (here through a <see cref="DefaultHttpContext"/>): a well-known admin certificate,
/// a registered ValidUser with Read on the database, and a connection's first request (the
/// identity looked up, not cached: once per connection). Target: under 2 µs per request.
/// </summary>
[MemoryDiagnoser]
public class AuthorizationBenchmarks
{
    private const int Operations = 1000;

    private string _folder = null!;
    private ServerSecurity _security = null!;
    private RequestHandler _bare = null!;
    private RequestHandler _secured = null!;
    private RequestContext _admin = null!;
    private RequestContext _user = null!;
    private RequestContext _firstOnConnection = null!;
    private TlsConnection _firstConnection = null!;

    [GlobalSetup]
    public void Setup()
    {
        _folder = Path.Combine(Path.GetTempPath(), "jackdaw-authorization-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(_folder);
        var server = Certificate("jackdaw-bench-server", server: true);
        var pfx = Path.Combine(_folder, "server.pfx");
        File.WriteAllBytes(pfx, server.Export(X509ContentType.Pfx));
        var admin = Certificate("jackdaw-bench-admin", server: false);
        var user = Certificate("jackdaw-bench-user", server: false);
        var options = new SecurityOptions { CertificatePath = pfx, WellKnownAdminCertificates = [admin.Thumbprint] };
        _security = ServerSecurity.Open(options, _folder, NullLoggerFactory.Instance);
        // Other registered certificates, so the store is not a table of one.
        for (var i = 0; i < 20; i++)
        {
            _security.Store.Put(CertificateDefinition.Of(Certificate($"jackdaw-bench-other-{i}", server: false), $"other {i}", SecurityClearance.ValidUser, new Dictionary<string, DatabaseAccess> { [$"db{i}"] = DatabaseAccess.ReadWrite }));
        }
        _security.Store.Put(CertificateDefinition.Of(user, "user", SecurityClearance.ValidUser, new Dictionary<string, DatabaseAccess> { ["other"] = DatabaseAccess.Read, ["bench"] = DatabaseAccess.Read }));

        _bare = static context => ValueTask.CompletedTask;
        _secured = RequestAuthorization.Wrap(_bare, RouteAccess.DatabaseRead, "/databases/*/docs", _security.Authorizer);
        var serverContext = new ServerContext(new ServerOptions { DataDir = _folder }, NullLoggerFactory.Instance, _security);
        var router = new TrieRouter<RequestHandler>.Builder().Add("/databases/*/docs", "GET", _bare).Build();
        _admin = Request(serverContext, router, admin, new TlsConnection());
        _user = Request(serverContext, router, user, new TlsConnection());
        _firstConnection = new TlsConnection();
        _firstOnConnection = Request(serverContext, router, user, _firstConnection);
        foreach (var context in new[] { _admin, _user })
        {
            if (!_secured(context).IsCompletedSuccessfully || context.Caller is null)
            {
                throw new InvalidOperationException("The secured handler refused the request.");
            }
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _security.Dispose();
        Directory.Delete(_folder, recursive: true);
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Operations)]
    public int Unsecured() => Run(_bare, _user);

    [Benchmark(OperationsPerInvoke = Operations)]
    public int WellKnownAdmin() => Run(_secured, _admin);

    [Benchmark(OperationsPerInvoke = Operations)]
    public int RegisteredUser() => Run(_secured, _user);

    /// <summary>A connection's first request: the certificate looked up in the store (thumbprint, definition), as once per connection.</summary>
    [Benchmark(OperationsPerInvoke = Operations)]
    public int FirstRequestOnConnection()
    {
        var done = 0;
        for (var i = 0; i < Operations; i++)
        {
            _firstConnection.Identity.Version = -1;
            if (_secured(_firstOnConnection).IsCompletedSuccessfully)
            {
                done++;
            }
        }
        return done;
    }

    private static int Run(RequestHandler handler, RequestContext context)
    {
        var done = 0;
        for (var i = 0; i < Operations; i++)
        {
            if (handler(context).IsCompletedSuccessfully)
            {
                done++;
            }
        }
        return done;
    }

    private static RequestContext Request(ServerContext server, TrieRouter<RequestHandler> router, X509Certificate2 certificate, TlsConnection connection)
    {
        var http = new DefaultHttpContext();
        http.Connection.ClientCertificate = certificate;
        http.Features.Set(connection);
        const string path = "/databases/bench/docs";
        if (!router.TryMatch(path, out var match))
        {
            throw new InvalidOperationException("No route for " + path);
        }
        var context = new RequestContext(server, null!);
        context.Initialize(http, path, match, isInner: false);
        return context;
    }

    private static X509Certificate2 Certificate(string name, bool server)
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid(server ? "1.3.6.1.5.5.7.3.1" : "1.3.6.1.5.5.7.3.2")], critical: false));
        using var made = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(1));
        return X509CertificateLoader.LoadPkcs12(made.Export(X509ContentType.Pfx), null, X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable);
    }
}
