"""What the course uses to teach: experiments, figures and the numbers in its prose.

A user of :mod:`pe_lib` imports the encodings and layers from the top of the
package; the modules here exist for the chapters and assignments.
"""
