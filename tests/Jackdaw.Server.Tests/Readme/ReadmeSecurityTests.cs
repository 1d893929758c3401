using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>
/// The Security section of README.md as a newcomer follows it: its <c>openssl</c> commands make the
/// certificates (in a temp folder rather than the repository's), the server starts with the
/// arguments of its <c>dotnet run</c> line, and each curl command answers as its comment says. That
/// needs openssl and curl, which the repository does not install: without them it is skipped, and
/// the same recipe with certificates made in C# (the files openssl would write) still runs.
/// </summary>
public sealed class ReadmeSecurityTests
{
    /// <summary>The README heading whose shell blocks this class runs (and <see cref="ReadmeCurlTests"/> does not).</summary>
    public const string Section = "Security";

    private const string DotnetRun = "dotnet run --project server -c Release --";
    private const string ReadmeOrigin = "127.0.0.1:8443";

    [FactWhenOnPath("openssl", "curl")]
    public async Task TheSectionsOpensslCommandsMakeCertificatesThatASecuredServerAndCurlAccept()
    {
        var commands = ReadmeDocument.Blocks()
            .Where(block => block.Language == "sh" && block.Section == Section)
            .SelectMany(ReadmeDocument.Commands)
            .ToList();
        Assert.True(commands.Count(c => c.Text.StartsWith("openssl ", StringComparison.Ordinal)) >= 7, $"README.md's Security section has too few openssl commands: the parser lost some ({commands.Count} commands).");
        Assert.Single(commands, c => c.Text.StartsWith(DotnetRun, StringComparison.Ordinal));
        Assert.True(commands.Count(c => c.Text.StartsWith("curl ", StringComparison.Ordinal)) >= 4, "README.md's Security section has too few curl commands.");

        using var work = new TempFolder("jackdaw-readme-security");
        ServerProcess? server = null;
        string? origin = null;
        var values = new Dictionary<string, string>();
        var failures = new List<string>();
        try
        {
            foreach (var command in commands)
            {
                if (command.Text.StartsWith(DotnetRun, StringComparison.Ordinal))
                {
                    // The arguments as the shell hands them over ($(openssl ...) run), on port 0.
                    var expanded = await Bash.RunAsync($"printf '%s\\n' {command.Text[DotnetRun.Length..]}", work.Path, TimeSpan.FromSeconds(60));
                    Assert.True(expanded.ExitCode == 0, $"README.md line {command.Line}: the arguments do not expand: {expanded.Error}");
                    var arguments = expanded.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries)
                        .Select(argument => "\"" + argument.Replace(ReadmeOrigin, "127.0.0.1:0", StringComparison.Ordinal) + "\"");
                    server = ServerProcess.Start(string.Join(" ", arguments), workingDirectory: work.Path);
                    origin = $"127.0.0.1:{(await server.WaitForAddressAsync(TimeSpan.FromSeconds(60))).Port}";
                }
                else if (command.Text.StartsWith("curl ", StringComparison.Ordinal))
                {
                    if (origin is null)
                    {
                        failures.Add($"README.md line {command.Line}: a curl command before the server is started");
                        continue;
                    }
                    var output = await ReadmeCurlTests.RunAsync(ReadmePattern.Fill(command.Text, values).Replace(ReadmeOrigin, origin, StringComparison.Ordinal), work.Path);
                    if (ReadmeCurlTests.Check(command, output, values) is { } problem)
                    {
                        failures.Add($"README.md line {command.Line}: {problem}\n  command: {command.Text}\n  output:  {output.Replace(origin, ReadmeOrigin, StringComparison.Ordinal).Trim()}");
                    }
                }
                else
                {
                    var result = await Bash.RunAsync(command.Text, work.Path, TimeSpan.FromSeconds(60));
                    if (result.ExitCode != 0)
                    {
                        failures.Add($"README.md line {command.Line}: exited with {result.ExitCode}\n  command: {command.Text}\n  {result.Output}{result.Error}");
                    }
                }
            }
        }
        finally
        {
            server?.Dispose();
        }
        Assert.True(failures.Count == 0, $"{failures.Count} command(s) of README.md's Security section do not do what it says:\n\n" + string.Join("\n\n", failures));
    }

    [Fact]
    public void WithoutOpensslTheRecipeTestIsSkippedSayingWhatIsMissing()
    {
        Assert.Null(new FactWhenOnPathAttribute("bash").Skip);
        var skip = new FactWhenOnPathAttribute("bash", "jackdaw-no-such-program").Skip;
        Assert.Equal("jackdaw-no-such-program not on PATH: install it to run this test.", skip);
    }

    [Fact]
    public async Task TheSameRecipeWithCertificatesMadeInCSharpServesAsTheReadmeSays()
    {
        // The files the README's openssl commands write: a CA, a server certificate it signed for
        // 127.0.0.1 and localhost, a client certificate it signed; PEM, keys as PKCS#8.
        using var work = new TempFolder("jackdaw-readme-security");
        using var authority = TestCertificates.Authority("Jackdaw CA");
        using var serverCertificate = TestCertificates.Server("localhost", issuer: authority);
        using var admin = TestCertificates.Client("admin", issuer: authority);
        var (serverCrt, serverKey) = TestCertificates.WritePem(serverCertificate, work.Path, "server");
        var (adminCrt, adminKey) = TestCertificates.WritePem(admin, work.Path, "admin");
        await using var server = await InProcessServer.StartAsync(
            "--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", serverCrt, "--Security:Certificate:KeyPath", serverKey,
            "--Security:WellKnownAdminCertificates", admin.Thumbprint);

        // As curl --cacert ca.crt: the server's chain and name are checked against that CA alone.
        using var fromFiles = X509Certificate2.CreateFromPemFile(adminCrt, adminKey);
        using var withCertificate = Client(server.Host.Urls.Single(), authority, fromFiles);
        using var withoutCertificate = Client(server.Host.Urls.Single(), authority, null);

        using (var stats = await withCertificate.GetAsync("/admin/stats"))
        {
            Assert.Equal(HttpStatusCode.OK, stats.StatusCode);
        }
        using (var created = await withCertificate.PutAsync("/admin/databases?name=Northwind", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        using (var version = await withoutCertificate.GetAsync("/build/version"))
        {
            Assert.Equal(HttpStatusCode.OK, version.StatusCode);
        }
        using var refused = await withoutCertificate.GetAsync("/databases");
        var message = await Api.AssertErrorAsync(refused, HttpStatusCode.Unauthorized, ErrorTypes.Authorization);
        Assert.StartsWith("This server requires a client certificate", message, StringComparison.Ordinal);
    }

    private static HttpClient Client(string url, X509Certificate2 authority, X509Certificate2? certificate)
    {
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.Add(authority);
        var handler = new SocketsHttpHandler
        {
            SslOptions = new SslClientAuthenticationOptions
            {
                CertificateChainPolicy = policy,
                ClientCertificates = certificate is null ? null : new X509CertificateCollection { certificate },
                LocalCertificateSelectionCallback = certificate is null ? null : (_, _, _, _, _) => certificate,
            },
        };
        return new HttpClient(handler) { BaseAddress = new Uri(url), Timeout = TimeSpan.FromMinutes(1) };
    }
}
