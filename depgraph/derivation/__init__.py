"""From a graph to one group per sample: direct and component modes, composites, time order."""
