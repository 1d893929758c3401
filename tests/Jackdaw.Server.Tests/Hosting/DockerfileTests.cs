using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Readme;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>
/// The Dockerfile's runtime settings, tried without Docker: the server started with the image's
/// <c>ENV</c> (the mounted certificate and the data folder in temp folders, port 0) serves HTTPS,
/// and the image's <c>HEALTHCHECK</c> command, with the container's environment, finds it healthy;
/// the unsecured variant's settings, as the Dockerfile and compose file state them, do the same
/// over plain http.
/// </summary>
public sealed class DockerfileTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task TheImagesEnvironmentServesHttpsWithTheMountedCertificateAndPassesItsHealthCheck()
    {
        using var certs = new TempFolder("jackdaw-docker-certs");
        using var data = new TempFolder("jackdaw-docker-data");
        using var certificate = TestCertificates.Server("db.example.com");
        TestCertificates.WritePem(certificate, certs.Path, "server");
        var environment = ImageEnvironment(certs.Path, data.Path);
        Assert.StartsWith("https://0.0.0.0:", environment["JACKDAW_URLS"], StringComparison.Ordinal);

        await AssertHealthyAsync(environment);
    }

    [Fact]
    public async Task TheUnsecuredVariantsSettingsServeHttpAndPassTheSameHealthCheck()
    {
        using var certs = new TempFolder("jackdaw-docker-certs");
        using var data = new TempFolder("jackdaw-docker-data");
        var environment = ImageEnvironment(certs.Path, data.Path);
        // What docker-compose.yml's jackdaw-unsecured (and the Dockerfile's comment) set: no
        // certificate (the image's paths emptied), plain http, the setting that allows it, and a
        // port published on the host's loopback only.
        var compose = await File.ReadAllTextAsync(Path.Combine(ReadmeDocument.RepositoryRoot, "docker-compose.yml"));
        string[] unsecured = ["JACKDAW_URLS: http://0.0.0.0:8080", "JACKDAW_SECURITY__CERTIFICATE__PATH: \"\"", "JACKDAW_SECURITY__CERTIFICATE__KEYPATH: \"\"",
            "JACKDAW_SECURITY__UNSECUREDACCESSALLOWED: PublicNetwork", "- \"127.0.0.1:8080:8080\""];
        foreach (var line in unsecured)
        {
            Assert.Contains(line, compose, StringComparison.Ordinal);
        }
        environment["JACKDAW_URLS"] = "http://0.0.0.0:8080";
        environment["JACKDAW_SECURITY__CERTIFICATE__PATH"] = "";
        environment["JACKDAW_SECURITY__CERTIFICATE__KEYPATH"] = "";
        environment["JACKDAW_SECURITY__UNSECUREDACCESSALLOWED"] = "PublicNetwork";

        await AssertHealthyAsync(environment);
    }

    /// <summary>Starts the server with <paramref name="environment"/> (on a port of its choosing), then runs the image's HEALTHCHECK command as the container would.</summary>
    private static async Task AssertHealthyAsync(Dictionary<string, string> environment)
    {
        var configured = environment["JACKDAW_URLS"];
        environment["JACKDAW_URLS"] = PortZero(configured);
        using var server = ServerProcess.Start("", environment);
        var address = await server.WaitForAddressAsync(Timeout);

        // The container's environment names the port it listens on; the check reads it from there.
        environment["JACKDAW_URLS"] = configured[..configured.LastIndexOf(':')] + ":" + address.Port;
        var command = HealthCheckCommand();
        Assert.Equal(new[] { "dotnet", "/app/Jackdaw.Server.dll", "healthcheck" }, command);
        using var check = ServerProcess.Start(string.Join(" ", command.Skip(2)), environment);
        Assert.True(await check.WaitForExitAsync(Timeout) == 0, $"The image's health check failed:\n{check.Output}\nServer:\n{server.Output}");
    }

    private static string PortZero(string url) => url[..url.LastIndexOf(':')] + ":0";

    /// <summary>The runtime stage's ENV, with /certs and /data where the test put them.</summary>
    private static Dictionary<string, string> ImageEnvironment(string certs, string data)
    {
        var environment = new Dictionary<string, string>();
        foreach (var instruction in Instructions("ENV"))
        {
            foreach (var pair in instruction.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                var equals = pair.IndexOf('=');
                Assert.True(equals > 0, $"Dockerfile ENV '{pair}' is not KEY=VALUE.");
                var value = pair[(equals + 1)..];
                environment[pair[..equals]] = value == "/data" ? data
                    : value.StartsWith("/certs/", StringComparison.Ordinal) ? Path.Combine(certs, value["/certs/".Length..])
                    : value;
            }
        }
        Assert.True(environment.ContainsKey("JACKDAW_URLS"), "The Dockerfile sets no JACKDAW_URLS.");
        return environment;
    }

    private static string[] HealthCheckCommand()
    {
        var instruction = Assert.Single(Instructions("HEALTHCHECK"));
        var cmd = instruction.IndexOf("CMD ", StringComparison.Ordinal);
        Assert.True(cmd >= 0, $"The HEALTHCHECK has no CMD: {instruction}");
        return JsonSerializer.Deserialize<string[]>(instruction[(cmd + 4)..])!;
    }

    /// <summary>The arguments of each <paramref name="name"/> instruction of the Dockerfile's last stage, continuation lines joined.</summary>
    private static List<string> Instructions(string name)
    {
        var lines = File.ReadAllLines(Path.Combine(ReadmeDocument.RepositoryRoot, "Dockerfile"));
        var lastStage = Array.FindLastIndex(lines, line => line.StartsWith("FROM ", StringComparison.Ordinal));
        var found = new List<string>();
        for (var i = lastStage; i < lines.Length; i++)
        {
            if (!lines[i].StartsWith(name + " ", StringComparison.Ordinal))
            {
                continue;
            }
            var text = lines[i][(name.Length + 1)..];
            while (text.EndsWith('\\') && i + 1 < lines.Length)
            {
                text = text[..^1] + " " + lines[++i].Trim();
            }
            found.Add(text.Trim());
        }
        return found;
    }
}
