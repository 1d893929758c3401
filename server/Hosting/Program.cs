namespace Jackdaw.Server.Hosting;

/// <summary>
/// <c>jackdaw [options]</c>, <c>jackdaw healthcheck [url]</c>, <c>jackdaw --help</c>. A mistake on
/// the command line (an unknown option, a bad value) is told in one line on stderr, exit code 2.
/// </summary>
public static class Program
{
    private const int BadUsage = 2;

    public static async Task<int> Main(string[] args)
    {
        CommandLine commandLine;
        try
        {
            commandLine = CommandLine.Parse(args);
        }
        catch (InvalidOperationException e)
        {
            return await FailAsync(e.Message, BadUsage).ConfigureAwait(false);
        }
        if (commandLine.Help)
        {
            await Console.Out.WriteAsync(CommandLine.HelpText(BuildInfo.FromAssembly(typeof(Program).Assembly).Version)).ConfigureAwait(false);
            return 0;
        }
        if (commandLine.HealthCheckUrl is { } url)
        {
            return await HealthCheck.RunAsync(url).ConfigureAwait(false);
        }

        JackdawHost host;
        try
        {
            host = JackdawHost.Create(commandLine.Settings);
        }
        catch (InvalidOperationException e)
        {
            return await FailAsync(e.Message, BadUsage).ConfigureAwait(false);
        }
        await using (host.ConfigureAwait(false))
        {
            await host.StartAsync().ConfigureAwait(false);
            await host.WaitForShutdownAsync().ConfigureAwait(false);
        }
        return 0;
    }

    private static async Task<int> FailAsync(string message, int exitCode)
    {
        await Console.Error.WriteLineAsync($"jackdaw: {message}").ConfigureAwait(false);
        return exitCode;
    }
}
