using System.Diagnostics;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Compat;

/// <summary>
/// RavenDB's official Node.js client (`ravendb` 7.2.6, pinned with a lock file in
/// tests/compat/ravendb-node) against a real Jackdaw server on port 0 with a temp folder: the
/// wire-compatibility suite. It installs the client with `npm ci` when needed and runs every
/// `tests/*.test.mjs` with `node --test`; each Node test is one client scenario.
/// </summary>
public sealed class RavenDbNodeClientTests(ITestOutputHelper output)
{
    private static readonly SemaphoreSlim Install = new(1, 1);

    [Fact]
    public async Task TheOfficialNodeClientPassesTheCompatibilitySuite()
    {
        var suite = SuiteFolder();
        await EnsureInstalledAsync(suite);
        await using var server = await InProcessServer.StartAsync();
        var (exitCode, text) = await RunAsync("node", "--test --test-concurrency=1 --test-reporter=tap tests/", suite, TimeSpan.FromMinutes(5),
            ("JACKDAW_URL", server.Client.BaseAddress!.GetLeftPart(UriPartial.Authority)));
        output.WriteLine(text);
        Assert.True(exitCode == 0, "The RavenDB Node.js client suite failed:\n" + text);
        Assert.Contains("# fail 0", text, StringComparison.Ordinal);
        // The suite ran at all: every scenario file was found and counted.
        Assert.Matches(@"# pass [1-9]\d*", text);
    }

    /// <summary>
    /// The same scenarios against a secured server, the client presenting a ClusterAdmin client
    /// certificate through its <c>authOptions</c>: as PEM (certificate and PKCS#1 key in one file, as
    /// that client reads them) for the whole suite, and as a password-protected PFX for the sessions
    /// and the certificate operations. The certificate operations also get two server certificates
    /// (PFX without password) to replace the server's with and put it back.
    /// </summary>
    [Theory]
    [InlineData("pem", "tests/")]
    [InlineData("pfx", "tests/sessions.test.mjs tests/certificates.test.mjs")]
    public async Task TheOfficialNodeClientPassesTheSuiteOnASecuredServer(string type, string files)
    {
        var suite = SuiteFolder();
        await EnsureInstalledAsync(suite);
        await using var server = await SecuredServer.StartAsync();
        using var client = TestCertificates.Client("node-client");
        server.Register(client, Jackdaw.Server.Security.SecurityClearance.ClusterAdmin);
        var folder = server.CertificateFolder;
        var ca = Path.Combine(folder, "ca.pem");
        File.WriteAllText(ca, server.ServerCertificate.ExportCertificatePem());
        var certificate = Path.Combine(folder, "client." + type);
        const string password = "node-secret";
        if (type == "pem")
        {
            File.WriteAllText(certificate, client.ExportCertificatePem() + "\n" + client.GetRSAPrivateKey()!.ExportRSAPrivateKeyPem() + "\n");
        }
        else
        {
            TestCertificates.WritePfx(client, certificate, password);
        }
        using var next = TestCertificates.Server("jackdaw-next");
        var nextCa = Path.Combine(folder, "next.pem");
        File.WriteAllText(nextCa, next.ExportCertificatePem());
        files = string.Join(' ', files.Split(' ').Where(f => f.EndsWith('/') || File.Exists(Path.Combine(suite, f))));
        var (exitCode, text) = await RunAsync("node", "--test --test-concurrency=1 --test-reporter=tap " + files, suite, TimeSpan.FromMinutes(5),
            ("JACKDAW_URL", server.Url.TrimEnd('/')),
            ("JACKDAW_AUTH_TYPE", type),
            ("JACKDAW_CLIENT_CERT", certificate),
            ("JACKDAW_CLIENT_CERT_PASSWORD", type == "pfx" ? password : string.Empty),
            ("JACKDAW_CA", ca),
            ("JACKDAW_SERVER_PFX", TestCertificates.WritePfx(server.ServerCertificate, Path.Combine(folder, "own.pfx"))),
            ("JACKDAW_NEXT_SERVER_PFX", TestCertificates.WritePfx(next, Path.Combine(folder, "next.pfx"))),
            ("JACKDAW_NEXT_SERVER_CA", nextCa));
        output.WriteLine(text);
        Assert.True(exitCode == 0, $"The RavenDB Node.js client suite failed on a secured server ({type}):\n" + text);
        Assert.Contains("# fail 0", text, StringComparison.Ordinal);
        Assert.Matches(@"# pass [1-9]\d*", text);
    }

    internal static async Task EnsureInstalledAsync(string suite)
    {
        await Install.WaitAsync();
        try
        {
            var marker = Path.Combine(suite, "node_modules", ".package-lock.json");
            var lockFile = Path.Combine(suite, "package-lock.json");
            if (File.Exists(marker) && File.GetLastWriteTimeUtc(marker) >= File.GetLastWriteTimeUtc(lockFile))
            {
                return;
            }
            var (exitCode, text) = await RunAsync("npm", "ci --no-audit --no-fund", suite, TimeSpan.FromMinutes(5));
            Assert.True(exitCode == 0, "npm ci failed in " + suite + ":\n" + text);
        }
        finally
        {
            Install.Release();
        }
    }

    internal static string SuiteFolder()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            var candidate = Path.Combine(dir.FullName, "tests", "compat", "ravendb-node");
            if (File.Exists(Path.Combine(candidate, "package.json")))
            {
                return candidate;
            }
        }
        throw new DirectoryNotFoundException($"tests/compat/ravendb-node not found above {AppContext.BaseDirectory}.");
    }

    private static Task<(int ExitCode, string Output)> RunAsync(string command, string arguments, string folder, TimeSpan timeout, params (string Name, string Value)[] environment) =>
        RunAsync(command, arguments, folder, timeout, onLine: null, environment);

    /// <summary>Runs a program to its end (or kills it at <paramref name="timeout"/>); <paramref name="onLine"/> sees each line it prints as it prints it.</summary>
    internal static async Task<(int ExitCode, string Output)> RunAsync(string command, string arguments, string folder, TimeSpan timeout, Action<string>? onLine, params (string Name, string Value)[] environment)
    {
        var start = new ProcessStartInfo(command, arguments)
        {
            WorkingDirectory = folder,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var (name, value) in environment)
        {
            start.Environment[name] = value;
        }
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {command}.");
        var text = new StringBuilder();
        var stdout = PumpAsync(process.StandardOutput, text, onLine);
        var stderr = PumpAsync(process.StandardError, text, null);
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            text.AppendLine($"(killed after {timeout})");
        }
        await Task.WhenAll(stdout, stderr);
        return (process.ExitCode, text.ToString());
    }

    private static async Task PumpAsync(StreamReader reader, StringBuilder into, Action<string>? onLine)
    {
        while (await reader.ReadLineAsync() is { } line)
        {
            lock (into)
                into.AppendLine(line);
            onLine?.Invoke(line);
        }
    }
}
