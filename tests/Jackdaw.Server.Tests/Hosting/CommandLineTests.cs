using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>The command line parsed in process; <see cref="CommandLineProcessTests"/> runs the real binary.</summary>
public class CommandLineTests
{
    [Theory]
    [InlineData("--urls=http://127.0.0.1:1", "--max-body-size=5")]
    [InlineData("--urls", "http://127.0.0.1:1", "--max-body-size", "5")]
    [InlineData("--URLS", "http://127.0.0.1:1", "--Max-Body-Size=5")]
    [InlineData("--urls", "http://127.0.0.1:9", "--urls", "http://127.0.0.1:1", "--max-body-size", "5")]
    public void OptionsSetTheirKeysWhicheverTheFormAndCaseAndTheLastWins(params string[] args)
    {
        var settings = CommandLine.Parse(args).Settings;
        Assert.Equal("http://127.0.0.1:1", settings["Urls"]);
        Assert.Equal("5", settings["MaxRequestBodySize"]);
        Assert.Equal(2, settings.Count);
    }

    [Fact]
    public void EveryArgumentTheTestsAndLoadScriptsPassIsAccepted()
    {
        var settings = CommandLine.Parse(
        [
            "--urls", "http://127.0.0.1:0", "--data-dir", "/tmp/d", "--max-body-size", "1048576", "--public-url", "https://db.example.com/jackdaw/",
            "--Logging:LogLevel:Default=Warning", "--Logging:LogLevel:Jackdaw=Information", "--Logging:Console:FormatterName", "simple",
            "--Changes:QueueCapacity=32", "--Changes:CloseGrace=00:01:00", "--Changes:MaxCommandBytes", "2048", "--Changes:EventStreamHeartbeat=5",
        ]).Settings;
        Assert.Equal("/tmp/d", settings["DataDir"]);
        Assert.Equal("https://db.example.com/jackdaw/", settings["PublicUrl"]);
        Assert.Equal("Information", settings["Logging:LogLevel:Jackdaw"]);
        Assert.Equal("simple", settings["Logging:Console:FormatterName"]);
        Assert.Equal("00:01:00", settings["Changes:CloseGrace"]);
        Assert.Equal("5", settings["Changes:EventStreamHeartbeat"]);
    }

    [Theory]
    [InlineData("--port", "unknown option '--port'; did you mean '--urls'?")]
    [InlineData("--url", "unknown option '--url'; did you mean '--urls'?")]
    [InlineData("--datadir", "unknown option '--datadir'; did you mean '--data-dir'?")]
    [InlineData("--pubilc-url", "unknown option '--pubilc-url'; did you mean '--public-url'?")]
    [InlineData("--Changes:QueueCapacty", "unknown option '--Changes:QueueCapacty'; did you mean '--Changes:QueueCapacity'?")]
    [InlineData("--Logging", "unknown option '--Logging'; did you mean '--Logging:LogLevel:CATEGORY'?")]
    [InlineData("--Kestrel:Limits:MaxConcurrentConnections", "unknown option '--Kestrel:Limits:MaxConcurrentConnections'; did you mean '--Limits:MaxConcurrentConnections'?")]
    [InlineData("--Limits:MaxQueryLimt", "unknown option '--Limits:MaxQueryLimt'; did you mean '--Limits:MaxQueryLimit'?")]
    [InlineData("-urls", "unknown option '-urls'; did you mean '--urls'?")]
    [InlineData("--", "unknown option '--' (")]
    [InlineData("urls", "unexpected argument 'urls'; did you mean '--urls'?")]
    [InlineData("healthchek", "unexpected argument 'healthchek'; did you mean 'healthcheck'?")]
    public void AMistakeIsNamedWithTheNearestOption(string arg, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => CommandLine.Parse([arg, "x"]));
        Assert.StartsWith(message, error.Message, StringComparison.Ordinal);
        Assert.EndsWith("(jackdaw --help lists the options)", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
    }

    [Theory]
    [InlineData("healthcheck")]
    [InlineData("HealthCheck", "http://127.0.0.1:9/build/version")]
    public void HealthCheckTakesAnOptionalUrl(params string[] args)
    {
        var commandLine = CommandLine.Parse(args);
        Assert.Equal(args.Length > 1 ? args[1] : "http://127.0.0.1:8080/build/version", commandLine.HealthCheckUrl);
        Assert.False(commandLine.Help);
    }

    [Fact]
    public void HelpTextShowsEveryOptionWithItsDefaultAndEnvironment()
    {
        var help = CommandLine.HelpText("1.2.3");
        foreach (var option in CommandLineOption.All)
        {
            Assert.Contains($"  {option.Shown} {option.Value}\n", help, StringComparison.Ordinal);
            Assert.Contains(option.Default, help, StringComparison.Ordinal);
            Assert.Contains(option.Environment, help, StringComparison.Ordinal);
        }
        Assert.All(help.Split('\n'), line => Assert.True(line.Length <= 100, line));
    }

    [Fact]
    public void HostCreateRefusesAnUnknownOption()
    {
        var error = Assert.Throws<InvalidOperationException>(() => JackdawHost.Create(["--port", "9000"]));
        Assert.Contains("'--urls'", error.Message, StringComparison.Ordinal);
    }
}
