namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// A fact that needs programs the repository does not install (<c>openssl</c>, say): skipped, with
/// a message naming the missing one, on a machine whose PATH lacks it, rather than failing there.
/// </summary>
public sealed class FactWhenOnPathAttribute : FactAttribute
{
    public FactWhenOnPathAttribute(params string[] programs)
    {
        var missing = programs.Where(program => !OnPath(program)).ToList();
        if (missing.Count > 0)
        {
            Skip = $"{string.Join(" and ", missing)} not on PATH: install {(missing.Count == 1 ? "it" : "them")} to run this test.";
        }
    }

    public static bool OnPath(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty)
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Any(folder => File.Exists(Path.Combine(folder, program)));
}
