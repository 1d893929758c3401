namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// Tests that measure the whole process (open file descriptors, memory, process-wide counters) or
/// load both cores for a minute: xunit runs this collection after all the parallel ones, one test
/// at a time, so nothing else runs in the process to disturb them, and they slow no timed test.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class RunsAlone
{
    public const string Name = "Runs alone";
}
