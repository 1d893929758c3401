using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>
/// The .NET client section of README.md as a newcomer follows it: its shell block makes the console
/// project (in a temp folder instead of <c>../shop</c>), its C# blocks pasted one after the other are
/// <c>Program.cs</c>, and the program, run against the real server, prints what its text block shows.
/// </summary>
public sealed class ReadmeClientProgramTests
{
    [Fact]
    public async Task TheClientSnippetsCompileAsOneProgramAndPrintWhatTheReadmeShows()
    {
        var blocks = ReadmeDocument.Blocks();
        var setup = blocks.Single(b => b.Language == "sh" && b.Code.Contains("dotnet new console", StringComparison.Ordinal));
        var code = blocks.Where(b => b.Language == "csharp" && b.FirstLine > setup.FirstLine).ToList();
        var printed = blocks.First(b => b.Language == "text" && b.FirstLine > code[^1].FirstLine);
        Assert.True(code.Count >= 5, $"README.md has {code.Count} C# blocks after the console project's commands.");

        using var work = new TempFolder("jackdaw-readme-shop");
        var shop = Path.Combine(work.Path, "shop");
        foreach (var command in ReadmeDocument.Commands(setup))
        {
            await RunAsync(command.Text.Replace("../shop", shop, StringComparison.Ordinal), ReadmeDocument.RepositoryRoot, TimeSpan.FromMinutes(3));
        }

        using var data = new TempFolder("jackdaw-readme-data");
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        var address = await server.WaitForAddressAsync(TimeSpan.FromSeconds(60));
        var program = string.Join("\n", code.Select(b => b.Code));
        await File.WriteAllTextAsync(Path.Combine(shop, "Program.cs"), program.Replace("127.0.0.1:8080", $"127.0.0.1:{address.Port}", StringComparison.Ordinal));

        // Release: the client is already built so by the test command (the README's Debug run builds it again).
        var output = await RunAsync($"dotnet run --project \"{shop}\" -c Release", work.Path, TimeSpan.FromMinutes(5));
        Assert.True(ReadmePattern.Matches(printed.Code.TrimEnd(), output, []),
            $"The program printed:\n{output}\nREADME.md line {printed.FirstLine} shows:\n{printed.Code}");
    }

    private static async Task<string> RunAsync(string command, string workingDirectory, TimeSpan timeout)
    {
        var result = await Bash.RunAsync(command, workingDirectory, timeout, new Dictionary<string, string> { ["DOTNET_NOLOGO"] = "1", ["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1" });
        if (result.TimedOut)
        {
            throw new TimeoutException($"'{command}' did not finish in {timeout}. Output:\n{result.Output}\n{result.Error}");
        }
        Assert.True(result.ExitCode == 0, $"'{command}' exited with {result.ExitCode}:\n{result.Output}\n{result.Error}");
        return result.Output;
    }
}
